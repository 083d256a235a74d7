/**
 * The rows of built-in access data a module's declaration implies, as SQL (no file read: the
 * workers tests use it too): each permission with its id, name and description, and each grant of
 * it to a built-in role (super-admin holds every one). `inserted(pattern)` says whether an earlier
 * migration already has a statement, so only what is missing is written. INSERT OR IGNORE with a
 * fixed timestamp: running it twice is harmless and no row depends on when it was inserted.
 */
import { BUILTIN_ROLES, type BuiltinRole, type PermissionDef } from "../src/lib/access";

export const BUILTIN_AT = "'2026-01-01T00:00:00.000Z'";
export const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;

export function permissionRows(
  permissions: readonly PermissionDef[],
  inserted: (pattern: RegExp) => boolean = () => false,
): string[] {
  const rows: string[] = [];
  for (const p of permissions) {
    if (inserted(new RegExp(`INTO permission \\([^)]*\\) VALUES \\(${p.id}, `))) continue;
    rows.push(
      `INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (${p.id}, ${quote(p.name)}, ${quote(p.description)}, ${BUILTIN_AT}, ${BUILTIN_AT});`,
    );
  }
  for (const [key, role] of Object.entries(BUILTIN_ROLES) as [BuiltinRole, { id: number }][]) {
    for (const p of permissions) {
      if (key !== "super-admin" && !p.grants.includes(key)) continue;
      if (inserted(new RegExp(`INTO role_permission \\(role_id, permission_id\\) VALUES \\(${role.id}, ${p.id}\\);`)))
        continue;
      rows.push(`INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (${role.id}, ${p.id});`);
    }
  }
  return rows;
}

/** Statements as a migration file separates them (drizzle-kit's breakpoints). */
export const asMigration = (statements: readonly string[]) => statements.join("\n--> statement-breakpoint\n");

/**
 * The permissions with their ids: one declared without (a new module's) takes the next free id
 * after the highest declared, in declaration order; `assigned` is told each one given.
 */
export function withIds(
  declared: readonly (Omit<PermissionDef, "id"> & { id?: number })[],
  assigned: (p: PermissionDef) => void = () => {},
): PermissionDef[] {
  let next = Math.max(0, ...declared.map((p) => p.id ?? 0)) + 1;
  return declared.map((p) => {
    if (p.id !== undefined) return { ...p, id: p.id };
    const given = { ...p, id: next++ };
    assigned(given);
    return given;
  });
}

/** A `permissions.ts` text with `id` written into the declaration of the permission `name`. */
export function idWritten(text: string, name: string, id: number): string {
  const at = `name: ${JSON.stringify(name)}`;
  if (!text.includes(at)) throw new Error(`${name}: not declared in this file`);
  return text.replace(at, `id: ${id}, ${at}`);
}
