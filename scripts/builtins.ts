/**
 * Prints the SQL that inserts the built-in permissions, roles and grants the modules declare
 * (src/modules/index.ts), and the built-in application modules (src/lib/app-modules.ts), that no
 * migration inserts yet. Statements are INSERT OR IGNORE with fixed timestamps, so re-running is
 * harmless and no row depends on when it was inserted. With `--append <migration>`, adds them to
 * that migration (the new table's, which drizzle-kit just wrote), so one migration holds a new
 * resource: its table and its permission rows.
 *   npm run db:generate -- --name note && npm run -s db:builtins -- --append migrations/<that file>.sql
 */
import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { BUILTIN_ROLES } from "../src/lib/access";
import { APP_MODULES } from "../src/lib/app-modules";
import { fold } from "../src/lib/fold";
import { permissionCatalogue } from "../src/modules";
import { BUILTIN_AT as AT, asMigration, permissionRows, quote as q } from "./builtin-rows";

const append = process.argv.includes("--append") ? process.argv[process.argv.indexOf("--append") + 1] : undefined;
if (process.argv.includes("--append") && !append) throw new Error("--append names a migration file");

// What earlier migrations insert, by key: permission ids, role ids, role:permission grants (the
// file appended to counts as earlier only for what it already has).
const dir = new URL("../migrations/", import.meta.url).pathname;
const sql = readdirSync(dir)
  .filter((f) => f.endsWith(".sql"))
  .map((f) => readFileSync(dir + f, "utf8"))
  .join("\n");
const has = (pattern: RegExp) => pattern.test(sql);

const wanted: string[] = [];
for (const [key, role] of Object.entries(BUILTIN_ROLES)) {
  if (has(new RegExp(`INTO role \\([^)]*\\) VALUES \\(${role.id}, `))) continue;
  wanted.push(
    `INSERT OR IGNORE INTO role (id, key, name, name_search, created_at, updated_at) VALUES (${role.id}, ${q(key)}, ${q(role.name)}, ${q(fold(role.name))}, ${AT}, ${AT});`,
  );
}
wanted.push(...permissionRows(permissionCatalogue(), has));

for (const [key, m] of Object.entries(APP_MODULES)) {
  if (has(new RegExp(`INTO application_module \\([^)]*\\) VALUES \\(${m.id}, `))) continue;
  wanted.push(
    `INSERT OR IGNORE INTO application_module (id, key, name, name_search, description, created_at, updated_at) VALUES (${m.id}, ${q(key)}, ${q(m.name)}, ${q(fold(m.name))}, ${q(m.description)}, ${AT}, ${AT});`,
  );
}

const text = asMigration([
  `-- Built-in access data not inserted by earlier migrations (scripts/builtins.ts).`,
  ...wanted,
]);
if (append) {
  if (wanted.length === 0) console.log("Nothing to add: every declared permission and grant has its row.");
  else {
    appendFileSync(append, `\n--> statement-breakpoint\n${text}\n`);
    console.log(`${wanted.length} statement(s) added to ${append}`);
  }
} else console.log(text);
