/**
 * `npm run admin -- create-school ...`: a district's first day in production. Makes, in a database
 * that has only its migrations, the first school, its first school administrator and the platform's
 * super-admin, so they can sign in by SMS code (POST /api/v1/auth/send-code) and do the rest through
 * the API:
 *
 *   npm run admin -- create-school --name "Colegio Norte" --time-zone America/Mexico_City \
 *     --admin-phone +5215512345678 --admin-first-name Alma --admin-last-name Ruiz \
 *     [--super-admin-phone +15550000001 --super-admin-first-name Sam --super-admin-last-name Super] \
 *     [--language es] [--local [--persist-to DIR] | --remote] [--env ENV]
 *
 * The school is the row POST /api/v1/school writes (name and its search copy, time zone, language,
 * no levels yet): no `school_module` rows, so every application module is on, as for a school made
 * through the API. The administrator is a user (status `invited`, as people the school adds are)
 * with the built-in school-admin role in it; the super-admin is a user with `is_super_admin`
 * (without `--super-admin-phone`, the administrator is the super-admin too). Idempotent: a phone
 * that is a user already keeps its row and gains what it lacks (the membership, the flag); a school
 * of the same name is the one used again, never a second one. No audit rows: no one signed in did it.
 *
 * `wrangler d1 execute` takes no parameters: the values are validated (E.164 phone through the
 * app's own normaliser, an IANA zone Intl knows, names without control characters) and quoted as
 * SQLite strings (single quotes doubled). The SQL runs from a file, in one go; the rows written are
 * read back and printed. Local by default (`--env dev`, the local D1 `npm run dev` uses); `--remote`
 * is the deployed database (`--env` as deploy's: the top-level environment).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { fold } from "../src/lib/fold";
import { normalizePhone, PhoneMetadata, setPhoneMetadata } from "../src/lib/phone";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const WRANGLER = createRequire(import.meta.url).resolve("wrangler/bin/wrangler.js");
/** The built-in school-admin role (src/lib/access.ts BUILTIN_ROLES, inserted by migrations). */
const SCHOOL_ADMIN_ROLE = 2;

class InputError extends Error {}

// The Worker reads libphonenumber-js's metadata from its static assets; this script from the package.
setPhoneMetadata(
  PhoneMetadata.parse(
    JSON.parse(readFileSync(createRequire(import.meta.url).resolve("libphonenumber-js/metadata.min.json"), "utf8")),
  ),
);

const USAGE = `Usage: npm run admin -- create-school --name NAME --time-zone ZONE --admin-phone E164
         --admin-first-name FIRST --admin-last-name LAST
         [--super-admin-phone E164 [--super-admin-first-name FIRST --super-admin-last-name LAST]]
         [--language es|en] [--local [--persist-to DIR] | --remote] [--env ENV]`;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** A text value: trimmed, 1..max characters, no control characters. */
function textOf(what: string, value: string | undefined, max: number): string {
  const v = value?.trim() ?? "";
  if (v.length === 0) throw new InputError(`${what} is required`);
  if (v.length > max) throw new InputError(`${what} is at most ${max} characters`);
  if (CONTROL.test(v)) throw new InputError(`${what} has a control character`);
  return v;
}

function phoneOf(what: string, value: string | undefined): string {
  const raw = textOf(what, value, 32);
  const phone = normalizePhone(raw);
  if (!phone || !raw.startsWith("+"))
    throw new InputError(`${what} is not a phone number in E.164 form (+ and digits)`);
  return phone;
}

function zoneOf(value: string | undefined): string {
  const zone = textOf("--time-zone", value, 64);
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
  } catch {
    throw new InputError(`--time-zone ${zone} is not an IANA time zone (e.g. America/Mexico_City)`);
  }
  // The zone as Intl spells it (america/mexico_city is America/Mexico_City).
  return new Intl.DateTimeFormat("en", { timeZone: zone }).resolvedOptions().timeZone;
}

/** A SQLite string literal: single quotes doubled (the values have no control characters). */
export const quote = (value: string) => `'${value.replaceAll("'", "''")}'`;

export interface SchoolInput {
  name: string;
  timeZone: string;
  language: "es" | "en";
  admin: { phone: string; firstName: string; lastName: string };
  superAdmin: { phone: string; firstName: string; lastName: string };
}

/** The statements, in order; each idempotent. */
export function createSchoolSql(input: SchoolInput): string {
  const user = (p: SchoolInput["admin"]) =>
    `INSERT OR IGNORE INTO "user" (phone, first_name, last_name, first_name_search, last_name_search, language, status) VALUES (${[
      p.phone,
      p.firstName,
      p.lastName,
      fold(p.firstName),
      fold(p.lastName),
      input.language,
      "invited",
    ]
      .map(quote)
      .join(", ")});`;
  const school = `(SELECT id FROM "school" WHERE name = ${quote(input.name)} ORDER BY id LIMIT 1)`;
  return [
    user(input.superAdmin),
    user(input.admin),
    `UPDATE "user" SET is_super_admin = 1, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE phone = ${quote(input.superAdmin.phone)} AND is_super_admin = 0;`,
    `INSERT INTO "school" (name, name_search, time_zone, language) SELECT ${[input.name, fold(input.name), input.timeZone, input.language].map(quote).join(", ")} WHERE NOT EXISTS ${school};`,
    `INSERT OR IGNORE INTO "role_user" (school_id, user_id, role_id) SELECT ${school}, id, ${SCHOOL_ADMIN_ROLE} FROM "user" WHERE phone = ${quote(input.admin.phone)};`,
  ].join("\n");
}

export function parseCreateSchool(args: string[]) {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      name: { type: "string" },
      "time-zone": { type: "string" },
      language: { type: "string" },
      "admin-phone": { type: "string" },
      "admin-first-name": { type: "string" },
      "admin-last-name": { type: "string" },
      "super-admin-phone": { type: "string" },
      "super-admin-first-name": { type: "string" },
      "super-admin-last-name": { type: "string" },
      local: { type: "boolean" },
      remote: { type: "boolean" },
      env: { type: "string" },
      "persist-to": { type: "string" },
    },
  });
  if (values.local && values.remote) throw new InputError("Give --local or --remote, not both");
  if (values.remote && values["persist-to"]) throw new InputError("--persist-to is for --local");
  const language = values.language ?? "es";
  if (language !== "es" && language !== "en") throw new InputError("--language is es or en");
  const admin = {
    phone: phoneOf("--admin-phone", values["admin-phone"]),
    firstName: textOf("--admin-first-name", values["admin-first-name"], 100),
    lastName: textOf("--admin-last-name", values["admin-last-name"], 100),
  };
  const superPhone = values["super-admin-phone"];
  const superAdmin =
    superPhone === undefined
      ? admin
      : {
          phone: phoneOf("--super-admin-phone", superPhone),
          firstName:
            values["super-admin-first-name"] === undefined
              ? ""
              : textOf("--super-admin-first-name", values["super-admin-first-name"], 100),
          lastName:
            values["super-admin-last-name"] === undefined
              ? ""
              : textOf("--super-admin-last-name", values["super-admin-last-name"], 100),
        };
  const input: SchoolInput = {
    name: textOf("--name", values.name, 200),
    timeZone: zoneOf(values["time-zone"]),
    language,
    admin,
    superAdmin,
  };
  const target = values.remote
    ? ["--remote", `--env=${values.env ?? ""}`]
    : [
        "--local",
        "--env",
        values.env ?? "dev",
        ...(values["persist-to"] ? ["--persist-to", values["persist-to"]] : []),
      ];
  return { input, target };
}

/** Runs wrangler d1 execute; its JSON answer, or exits with wrangler's output. */
function d1(target: string[], args: string[]): unknown {
  const run = spawnSync(process.execPath, [WRANGLER, "d1", "execute", "DB", ...target, "--json", ...args], {
    cwd: ROOT,
    // Its --json answer is printed at the "log" level: a quieter WRANGLER_LOG would hide it.
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0", CI: "1", WRANGLER_LOG: "log" },
    encoding: "utf8",
  });
  if (run.status !== 0) {
    process.stderr.write(`${run.stdout}\n${run.stderr}\nwrangler d1 execute failed (exit ${run.status})\n`);
    process.exit(run.status ?? 1);
  }
  return JSON.parse(run.stdout);
}

function createSchool(args: string[]) {
  const { input, target } = parseCreateSchool(args);
  const dir = mkdtempSync(join(tmpdir(), "school-admin-"));
  try {
    const file = join(dir, "create-school.sql");
    writeFileSync(file, `${createSchoolSql(input)}\n`);
    d1(target, ["--yes", "--file", file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const phones = [...new Set([input.admin.phone, input.superAdmin.phone])].map(quote).join(", ");
  const read = d1(target, [
    "--command",
    `SELECT s.id AS schoolId, s.name, s.time_zone AS timeZone, u.id AS userId, u.phone, u.is_super_admin AS superAdmin,
       (SELECT count(*) FROM role_user r WHERE r.user_id = u.id AND r.school_id = s.id AND r.role_id = ${SCHOOL_ADMIN_ROLE}) AS schoolAdmin
     FROM "user" u, (SELECT * FROM "school" WHERE name = ${quote(input.name)} ORDER BY id LIMIT 1) s
     WHERE u.phone IN (${phones}) ORDER BY u.id`,
  ]) as { results: Record<string, unknown>[] }[];
  const rows = read[0]?.results ?? [];
  const school = rows[0];
  if (!school) throw new Error("The school was not found after writing it");
  console.log(`School ${school.schoolId}: ${school.name} (${school.timeZone})`);
  for (const r of rows) {
    const roles = [r.superAdmin ? "super-admin" : "", r.schoolAdmin ? "school admin" : ""].filter(Boolean);
    console.log(`User ${r.userId}: ${r.phone}, ${roles.join(" and ")}`);
  }
  console.log("They sign in with an SMS code: POST /api/v1/auth/send-code, then /api/v1/auth/verify-code.");
}

function main(argv: string[]) {
  const [command, ...args] = argv;
  try {
    if (command === "create-school") return createSchool(args);
    throw new InputError(command ? `Unknown command ${command}` : "Name a command");
  } catch (err) {
    if (err instanceof InputError || (err instanceof TypeError && "code" in err)) {
      process.stderr.write(`${err.message}\n${USAGE}\n`);
      process.exit(2);
    }
    throw err;
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("scripts/admin.ts")) {
  main(process.argv.slice(2));
}
