/**
 * Prints the SQL that inserts the built-in permissions, roles and grants of `src/lib/access.ts`
 * that no migration inserts yet (statements are INSERT OR IGNORE, so re-running is harmless).
 *   npx drizzle-kit generate --custom --name <name> && npm run -s db:builtins > migrations/<file>.sql
 * (the new, empty migration file is skipped when comparing).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { BUILTIN_ROLES, PERMISSION_DESCRIPTIONS, PERMISSIONS, type Permission } from "../src/lib/access";

const q = (s: string) => `'${s.replaceAll("'", "''")}'`;
const wanted: string[] = [];
for (const [name, id] of Object.entries(PERMISSIONS)) {
  wanted.push(
    `INSERT OR IGNORE INTO permission (id, name, description) VALUES (${id}, ${q(name)}, ${q(PERMISSION_DESCRIPTIONS[name as Permission])});`,
  );
}
for (const [key, role] of Object.entries(BUILTIN_ROLES)) {
  wanted.push(`INSERT OR IGNORE INTO role (id, key, name) VALUES (${role.id}, ${q(key)}, ${q(role.name)});`);
  for (const p of role.grants) {
    wanted.push(
      `INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (${role.id}, ${PERMISSIONS[p]});`,
    );
  }
}

const dir = new URL("../migrations/", import.meta.url).pathname;
const existing = new Set(
  readdirSync(dir)
    .filter((f) => f.endsWith(".sql") && statSync(dir + f).size > 0)
    .flatMap((f) => readFileSync(dir + f, "utf8").split("\n"))
    .map((line) => line.trim()),
);
const missing = wanted.filter((statement) => !existing.has(statement));
const lines = [`-- Built-in access data not inserted by earlier migrations (scripts/builtins.ts).`, ...missing];
console.log(lines.join("\n--> statement-breakpoint\n"));
