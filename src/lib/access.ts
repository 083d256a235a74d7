/**
 * Access control: permissions are declared by the modules that use them (each module's
 * `permissions.ts`, with a fixed id and the built-in roles that get it) and assembled into one
 * catalogue by the module registry (src/modules/index.ts), which hands it to `permissionCatalogue` here. Routes declare a permission *value*,
 * not a name, so a misspelt permission is a compile error and authorising needs no lookup.
 *
 * Ids are fixed because access tokens carry a bitmap of permission ids per school. The catalogue
 * is append-only: a new permission is declared without an id, `npm run -s db:builtins -- --append
 * <the table's migration>` writes the next free one into its `permissions.ts` and the rows into the
 * migration (docs/architecture.md "A resource"); test/access.test.ts checks code and database agree.
 */

/** Built-in roles: fixed ids and keys, inserted by migrations. Super-admins hold every permission. */
export const BUILTIN_ROLES = {
  "super-admin": { id: 1, name: "Super admin" },
  "school-admin": { id: 2, name: "School admin" },
  staff: { id: 3, name: "Administrative staff" },
  teacher: { id: 4, name: "Teacher" },
  parent: { id: 5, name: "Parent" },
  /** A bus driver who signs in: reads only the routes and lists of the vehicles they drive. */
  driver: { id: 6, name: "Driver" },
  /** Staff at a gate at dismissal: the board, calls and releases, and the day's plan; nothing else. */
  gate: { id: 7, name: "Gate" },
} as const;

export type BuiltinRole = keyof typeof BUILTIN_ROLES;

/**
 * Built-in permission ids are below this; custom ones (created through the API) take ids from here
 * on (migration 0008), and access tokens carry only the built-in ones: no route checks a custom one.
 */
export const FIRST_CUSTOM_PERMISSION_ID = 1000;

/** A named capability: `document.read`. */
export interface PermissionDef {
  readonly id: number;
  readonly name: string;
  readonly description: string;
  /** The built-in roles (besides super-admin, which holds everything) that are granted it. */
  readonly grants: readonly Exclude<BuiltinRole, "super-admin">[];
}

/** The roles of a school's own staff, who hold most school permissions. */
export const STAFF: PermissionDef["grants"] = ["school-admin", "staff"];

/**
 * Declares a module's permissions.
 * @example
 * export const permissions = definePermissions({
 *   read: { id: 15, name: "document.read", description: "List and read documents", grants: [...STAFF, "teacher"] },
 * });
 */
export function definePermissions<const P extends Record<string, PermissionDef>>(permissions: P): P {
  return permissions;
}

/**
 * Where the catalogue comes from: the module registry (src/modules/index.ts) gives it when it loads,
 * so code that judges permissions (the escalation rules) reads it here without importing the registry,
 * which imports every module.
 */
let catalogueSource: (() => readonly PermissionDef[]) | undefined;
let catalogue: readonly PermissionDef[] | undefined;

/** Declares how the catalogue is assembled (read once, on first use). */
export function declarePermissionCatalogue(assemble: () => readonly PermissionDef[]): void {
  catalogueSource = assemble;
  catalogue = undefined;
}

/** Every permission the modules declare, by id. */
export function permissionCatalogue(): readonly PermissionDef[] {
  if (!catalogue) {
    if (!catalogueSource) throw new Error("the permission catalogue is read before the module registry is loaded");
    catalogue = catalogueSource();
  }
  return catalogue;
}

/** The permissions a built-in role is granted (super-admin: all). */
export function grantsOf(role: BuiltinRole): readonly PermissionDef[] {
  return permissionCatalogue().filter((p) => role === "super-admin" || p.grants.includes(role));
}

/**
 * Who may call an operation:
 * - `public`: no credentials needed.
 * - `user`: any signed-in user, for their own data; no school is resolved.
 * - `member`: any signed-in user with a role in the current school (or a super-admin).
 * - a permission: a member whose roles grant it in the current school.
 */
export type Access = "public" | "user" | "member" | PermissionDef;

/**
 * Where a route acts:
 * - `school`: tenant data; the current school must be known (header, or the caller's only school).
 * - `platform`: data shared by every school (the permission catalogue); the school only decides
 *   which roles apply.
 */
export type Scope = "school" | "platform";

/** The access as written in the OpenAPI document (`x-access`). */
export const accessName = (access: Access): string => (typeof access === "string" ? access : access.name);

/**
 * The bitmaps of ids per school, as access tokens carry them (`{ "1": "AAg" }`): a row with a
 * null id still gives its school an entry (a membership without permissions).
 */
export function bitmapsBySchool(rows: Iterable<{ schoolId: number; id: number | null }>): Record<string, string> {
  const bySchool = new Map<number, number[]>();
  for (const { schoolId, id } of rows) {
    const ids = bySchool.get(schoolId) ?? [];
    if (id !== null) ids.push(id);
    bySchool.set(schoolId, ids);
  }
  return Object.fromEntries([...bySchool].map(([school, ids]) => [String(school), PermissionSet.encode(ids)]));
}

/** Bitmaps already decoded, by their text: a request checks its caller's bitmap several times. */
const decodedBitmaps = new Map<string, Uint8Array>();

/** A bitmap's bytes (none when it is not base64url: a garbled bitmap grants nothing). */
function bytesOf(encoded: string): Uint8Array {
  let bytes = decodedBitmaps.get(encoded);
  if (bytes) return bytes;
  let bin = "";
  try {
    bin = atob(encoded.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    bin = "";
  }
  bytes = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
  // Bounded: an isolate serves many callers; the common bitmaps (one per role) come straight back.
  if (decodedBitmaps.size >= 512) decodedBitmaps.clear();
  decodedBitmaps.set(encoded, bytes);
  return bytes;
}

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
    const byte = bytesOf(encoded)[id >> 3];
    return byte !== undefined && id >= 0 && (byte & (1 << (id & 7))) !== 0;
  },
  decode(encoded: string): number[] {
    const ids: number[] = [];
    const bytes = bytesOf(encoded);
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i] ?? 0;
      for (let bit = 0; bit < 8; bit++) if (byte & (1 << bit)) ids.push(i * 8 + bit);
    }
    return ids;
  },
};
