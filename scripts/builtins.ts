/**
 * Prints the SQL that inserts the built-in permissions, roles and grants the modules declare
 * (src/modules/index.ts), and the built-in application modules (src/lib/app-modules.ts), that no
 * migration inserts yet. Statements are INSERT OR IGNORE with fixed
 * timestamps, so re-running is harmless and no row depends on when it was inserted.
 *   npx drizzle-kit generate --custom --name <name> && npm run -s db:builtins > migrations/<file>.sql
 */
import { readdirSync, readFileSync } from "node:fs";
import { BUILTIN_ROLES } from "../src/lib/access";
import { APP_MODULES } from "../src/lib/app-modules";
import { fold } from "../src/lib/fold";
import { grantsOf, permissionCatalogue } from "../src/modules";

const AT = "'2026-01-01T00:00:00.000Z'";
const q = (s: string) => `'${s.replaceAll("'", "''")}'`;

// What earlier migrations insert, by key: permission ids, role ids, role:permission grants.
const dir = new URL("../migrations/", import.meta.url).pathname;
const sql = readdirSync(dir)
  .filter((f) => f.endsWith(".sql"))
  .map((f) => readFileSync(dir + f, "utf8"))
  .join("\n");
const has = (pattern: RegExp) => pattern.test(sql);

const wanted: string[] = [];
for (const p of permissionCatalogue()) {
  if (has(new RegExp(`INTO permission \\([^)]*\\) VALUES \\(${p.id}, `))) continue;
  wanted.push(
    `INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (${p.id}, ${q(p.name)}, ${q(p.description)}, ${AT}, ${AT});`,
  );
}
for (const [key, role] of Object.entries(BUILTIN_ROLES) as [
  keyof typeof BUILTIN_ROLES,
  { id: number; name: string },
][]) {
  if (!has(new RegExp(`INTO role \\([^)]*\\) VALUES \\(${role.id}, `))) {
    wanted.push(
      `INSERT OR IGNORE INTO role (id, key, name, name_search, created_at, updated_at) VALUES (${role.id}, ${q(key)}, ${q(role.name)}, ${q(fold(role.name))}, ${AT}, ${AT});`,
    );
  }
  for (const p of grantsOf(key)) {
    if (has(new RegExp(`INTO role_permission \\(role_id, permission_id\\) VALUES \\(${role.id}, ${p.id}\\);`)))
      continue;
    wanted.push(`INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (${role.id}, ${p.id});`);
  }
}

for (const [key, m] of Object.entries(APP_MODULES)) {
  if (has(new RegExp(`INTO application_module \\([^)]*\\) VALUES \\(${m.id}, `))) continue;
  wanted.push(
    `INSERT OR IGNORE INTO application_module (id, key, name, name_search, description, created_at, updated_at) VALUES (${m.id}, ${q(key)}, ${q(m.name)}, ${q(fold(m.name))}, ${q(m.description)}, ${AT}, ${AT});`,
  );
}

console.log(
  [`-- Built-in access data not inserted by earlier migrations (scripts/builtins.ts).`, ...wanted].join(
    "\n--> statement-breakpoint\n",
  ),
);
