/**
 * The role-user module's face: nothing other modules need yet (memberships are written through the
 * user module's `giveRole`).
 */
export {};
