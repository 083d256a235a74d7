/**
 * The access-control catalogue: every named permission with its stable id, and the built-in roles.
 *
 * Ids are fixed because access tokens carry a bitmap of permission ids per school. The catalogue
 * is append-only: a new permission takes the next id and a migration inserts it
 * (`npm run db:builtins` prints the SQL); `test/access.test.ts` checks code and database agree.
 */

export const PERMISSIONS = {
  "permission.read": 1,
  "permission.manage": 2,
  "user.read": 3,
  "user.write": 4,
  "role.read": 5,
  "role.write": 6,
  "school.read": 7,
  "school.write": 8,
  "school-configuration.read": 9,
  "school-configuration.write": 10,
  "holiday-cycle.read": 11,
  "holiday-cycle.write": 12,
  "schedule-configuration.read": 13,
  "schedule-configuration.write": 14,
  "document.read": 15,
  "document.write": 16,
  "device-token.read": 17,
  "bulk-process.read": 18,
  "bulk-process.write": 19,
  "transport-rules.read": 20,
  "transport-rules.write": 21,
  "cron-history.read": 22,
} as const;

export type Permission = keyof typeof PERMISSIONS;

export const PERMISSION_DESCRIPTIONS: Record<Permission, string> = {
  "permission.read": "List and read permissions",
  "permission.manage": "Create, update and delete permissions (platform)",
  "user.read": "List and read users of the school",
  "user.write": "Create, update and delete users of the school",
  "role.read": "List and read roles",
  "role.write": "Create, update and delete roles and role assignments",
  "school.read": "Read schools",
  "school.write": "Create, update and delete schools (platform)",
  "school-configuration.read": "Read school configurations",
  "school-configuration.write": "Create, update and delete school configurations",
  "holiday-cycle.read": "Read school holiday cycles",
  "holiday-cycle.write": "Create, update and delete school holiday cycles",
  "schedule-configuration.read": "Read schedule configurations",
  "schedule-configuration.write": "Create, update and delete schedule configurations",
  "document.read": "List and read documents, and get download URLs",
  "document.write": "Create, update and delete documents, and get upload URLs",
  "device-token.read": "List the device tokens of every user of the school",
  "bulk-process.read": "List and read bulk processes",
  "bulk-process.write": "Start, update and delete bulk processes",
  "transport-rules.read": "Read the transportation rules content",
  "transport-rules.write": "Replace the transportation rules content",
  "cron-history.read": "Read the history of scheduled runs",
};

const ALL = Object.keys(PERMISSIONS) as Permission[];
const PLATFORM_ONLY: Permission[] = ["permission.manage", "school.write"];
const SCHOOL_ADMIN = ALL.filter((p) => !PLATFORM_ONLY.includes(p));

/** Built-in roles: fixed ids and keys, granted by the migration that creates them. */
export const BUILTIN_ROLES = {
  "super-admin": { id: 1, name: "Super admin", grants: ALL },
  "school-admin": { id: 2, name: "School admin", grants: SCHOOL_ADMIN },
  staff: {
    id: 3,
    name: "Administrative staff",
    grants: SCHOOL_ADMIN.filter((p) => !["role.write", "permission.read", "cron-history.read"].includes(p)),
  },
  teacher: {
    id: 4,
    name: "Teacher",
    grants: [
      "school.read",
      "document.read",
      "transport-rules.read",
      "schedule-configuration.read",
      "holiday-cycle.read",
    ],
  },
  parent: {
    id: 5,
    name: "Parent",
    // Parents see the rules their requests must follow: cut-off, weeks ahead, holidays, transport rules.
    grants: ["school.read", "transport-rules.read", "holiday-cycle.read", "schedule-configuration.read"],
  },
} as const satisfies Record<string, { id: number; name: string; grants: readonly Permission[] }>;

export type BuiltinRole = keyof typeof BUILTIN_ROLES;

/**
 * A set of permission ids packed as a bitmap and written as base64url: the compact form access
 * tokens carry (a school admin's ~100 permissions fit in ~20 characters).
 */
export const PermissionSet = {
  encode(ids: Iterable<number>): string {
    const bytes: number[] = [];
    for (const id of ids) {
      const i = id >> 3;
      while (bytes.length <= i) bytes.push(0);
      bytes[i] = (bytes[i] ?? 0) | (1 << (id & 7));
    }
    let bin = "";
    for (const b of bytes) bin += String.fromCharCode(b);
    return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  },
  has(encoded: string, id: number): boolean {
    const i = id >> 3;
    // 4 base64 characters hold 3 bytes: decode only the group that holds byte i.
    const group = encoded.slice(Math.floor(i / 3) * 4, Math.floor(i / 3) * 4 + 4);
    if (!group) return false;
    let bin: string;
    try {
      bin = atob(group.replaceAll("-", "+").replaceAll("_", "/").padEnd(4, "="));
    } catch {
      return false;
    }
    const byte = bin.charCodeAt(i % 3);
    return Number.isFinite(byte) && (byte & (1 << (id & 7))) !== 0;
  },
  decode(encoded: string): number[] {
    const ids: number[] = [];
    let bin: string;
    try {
      bin = atob(encoded.replaceAll("-", "+").replaceAll("_", "/"));
    } catch {
      return ids;
    }
    for (let i = 0; i < bin.length; i++) {
      const byte = bin.charCodeAt(i);
      for (let bit = 0; bit < 8; bit++) if (byte & (1 << bit)) ids.push(i * 8 + bit);
    }
    return ids;
  },
};
