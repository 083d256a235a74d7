/** The route-run module's face: nothing other modules need yet. */
export {};
