/**
 * Prints the SQL that inserts the built-in permissions, roles and grants the modules declare
 * (src/modules/index.ts), and the built-in application modules (src/lib/app-modules.ts), that no
 * migration inserts yet. Statements are INSERT OR IGNORE with fixed timestamps, so re-running is
 * harmless and no row depends on when it was inserted. With `--append <migration>`, adds them to
 * that migration (the new table's, which drizzle-kit just wrote), so one migration holds a new
 * resource: its table and its permission rows.
 *
 * A permission declared without an `id` gets the next free one first, written into its module's
 * `permissions.ts` (ids are published: access tokens carry them, so once written they stay).
 *   npm run db:generate -- --name note && npm run -s db:builtins -- --append migrations/<that file>.sql
 */
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { BUILTIN_ROLES, type PermissionDef } from "../src/lib/access";
import { APP_MODULES } from "../src/lib/app-modules";
import { fold } from "../src/lib/fold";
import { MODULES } from "../src/modules";
import { BUILTIN_AT as AT, asMigration, idWritten, permissionRows, quote as q, withIds } from "./builtin-rows";

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

/** The modules' permissions, each with its id: one declared without gets the next free id, written in its file. */
function permissionsWithIds(): PermissionDef[] {
  const modules = new URL("../src/modules/", import.meta.url).pathname;
  const files = readdirSync(modules).map((name) => `${modules}${name}/permissions.ts`);
  const read = (f: string) => {
    try {
      return readFileSync(f, "utf8");
    } catch {
      return "";
    }
  };
  return withIds(
    MODULES.flatMap((m) => Object.values(m.permissions ?? {})),
    (p) => {
      const file = files.find((f) => read(f).includes(`name: ${JSON.stringify(p.name)}`));
      if (!file) throw new Error(`${p.name}: no src/modules/*/permissions.ts declares it`);
      writeFileSync(file, idWritten(read(file), p.name, p.id));
      console.error(`${p.name}: id ${p.id}, written in ${file}`);
    },
  );
}

const wanted: string[] = [];
for (const [key, role] of Object.entries(BUILTIN_ROLES)) {
  if (has(new RegExp(`INTO role \\([^)]*\\) VALUES \\(${role.id}, `))) continue;
  wanted.push(
    `INSERT OR IGNORE INTO role (id, key, name, name_search, created_at, updated_at) VALUES (${role.id}, ${q(key)}, ${q(role.name)}, ${q(fold(role.name))}, ${AT}, ${AT});`,
  );
}
wanted.push(...permissionRows(permissionsWithIds(), has));

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
