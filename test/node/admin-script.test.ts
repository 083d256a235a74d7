/**
 * `npm run admin -- create-school` (scripts/admin.ts), run as an operator runs it, against a fresh
 * local D1 of its own (`--persist-to` a temporary directory, after the migrations): the school, the
 * school admin's membership and the super-admin's flag are read back with `wrangler d1 execute
 * --json`; a second run changes nothing (the same school, the same users, one membership); a quote
 * in a name is stored as written; bad input is refused before anything runs.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WRANGLER = createRequire(import.meta.url).resolve("wrangler/bin/wrangler.js");
const TSX = createRequire(import.meta.url).resolve("tsx/cli");
const ENV = { ...process.env, WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0", CI: "1", WRANGLER_LOG: "log" };
// Migrating a fresh local D1 takes tens of seconds on a loaded machine.
const SLOW = 240_000;

function run(file: string, args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    // wrangler's migration tables repeat every name as each migration applies: past 60 migrations
    // their text passed execFile's 1 MiB default.
    const options = { cwd: ROOT, env: ENV, timeout: SLOW, maxBuffer: 64 * 1024 * 1024 };
    execFile(process.execPath, [file, ...args], options, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

let dir: string;
const admin = (args: string[]) =>
  run(TSX, ["scripts/admin.ts", "create-school", ...args, "--local", "--persist-to", dir]);

/**
 * Each statement's rows, all read by one `wrangler d1 execute --json` (each wrangler process costs
 * seconds of CPU: the checks of a test read together, after what they check has run).
 */
async function queries(...sqls: string[]): Promise<unknown[][]> {
  const res = await run(WRANGLER, [
    "d1",
    "execute",
    "DB",
    "--local",
    "--env",
    "dev",
    "--persist-to",
    dir,
    "--json",
    "--command",
    sqls.join(";\n"),
  ]);
  expect(res.code, res.stderr).toBe(0);
  const answers = JSON.parse(res.stdout) as { results: unknown[] }[];
  expect(answers, "one answer per statement").toHaveLength(sqls.length);
  return answers.map((a) => a.results);
}

async function query<T>(sql: string): Promise<T[]> {
  return ((await queries(sql))[0] ?? []) as T[];
}

const SCHOOL = [
  "--name",
  "Colegio O'Higgins; DROP TABLE user",
  "--time-zone",
  "America/Mexico_City",
  "--admin-phone",
  "+15550009001",
  "--admin-first-name",
  "Álma",
  "--admin-last-name",
  "Ruiz",
  "--super-admin-phone",
  "+15550009002",
  "--super-admin-first-name",
  "Sam",
  "--super-admin-last-name",
  "Super",
];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "admin-script-"));
  const migrated = await run(WRANGLER, [
    "d1",
    "migrations",
    "apply",
    "DB",
    "--local",
    "--env",
    "dev",
    "--persist-to",
    dir,
  ]);
  expect(migrated.code, migrated.stderr).toBe(0);
}, SLOW);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type UserRow = {
  id: number;
  phone: string;
  first_name: string;
  first_name_search: string;
  is_super_admin: number;
  status: string;
};

describe("npm run admin -- create-school", () => {
  it("makes the school, its admin and the super-admin, and a second run changes nothing", {
    timeout: SLOW,
  }, async () => {
    for (let i = 0; i < 2; i++) {
      const made = await admin(SCHOOL);
      expect(made.code, made.stderr).toBe(0);
      expect(made.stdout).toMatch(/School \d+: Colegio O'Higgins; DROP TABLE user \(America\/Mexico_City\)/);
    }
    const [schoolRows, userRows, membershipRows, moduleRows] = await queries(
      "SELECT id, name, name_search, time_zone, language, levels FROM school",
      "SELECT id, phone, first_name, first_name_search, is_super_admin, status FROM user ORDER BY phone",
      "SELECT school_id, user_id, role_id FROM role_user",
      "SELECT * FROM school_module",
    );
    const schools = schoolRows as {
      id: number;
      name: string;
      name_search: string;
      time_zone: string;
      language: string;
      levels: string;
    }[];
    expect(schools).toEqual([
      {
        id: expect.any(Number),
        name: "Colegio O'Higgins; DROP TABLE user",
        name_search: "colegio o'higgins; drop table user",
        time_zone: "America/Mexico_City",
        language: "es",
        levels: "[]",
      },
    ]);
    const schoolId = schools[0]?.id;
    const users = userRows as UserRow[];
    expect(users.map(({ id: _, ...u }) => u)).toEqual([
      { phone: "+15550009001", first_name: "Álma", first_name_search: "alma", is_super_admin: 0, status: "invited" },
      { phone: "+15550009002", first_name: "Sam", first_name_search: "sam", is_super_admin: 1, status: "invited" },
    ]);
    expect(membershipRows).toEqual([{ school_id: schoolId, user_id: users[0]?.id, role_id: 2 }]);
    // Every application module on: no state rows, as for a school made with POST /api/v1/school.
    expect(moduleRows).toEqual([]);
  });

  it("gives an existing user the membership of a second school, keeping their row", { timeout: SLOW }, async () => {
    const before = await query<UserRow>("SELECT id, first_name FROM user WHERE phone = '+15550009001'");
    const made = await admin([
      "--name",
      "Second school",
      "--time-zone",
      "America/New_York",
      "--admin-phone",
      "+1 555 000 9001",
      "--admin-first-name",
      "Other",
      "--admin-last-name",
      "Name",
      "--language",
      "en",
    ]);
    expect(made.code, made.stderr).toBe(0);
    const [after, roles] = await queries(
      "SELECT id, first_name, is_super_admin FROM user WHERE phone = '+15550009001'",
      "SELECT s.name FROM role_user r JOIN school s ON s.id = r.school_id JOIN user u ON u.id = r.user_id WHERE u.phone = '+15550009001' AND r.role_id = 2 ORDER BY s.id",
    );
    // Without --super-admin-phone the administrator is the super-admin.
    expect(after).toEqual([{ id: before[0]?.id, first_name: "Álma", is_super_admin: 1 }]);
    expect((roles as { name: string }[]).map((r) => r.name)).toEqual([
      "Colegio O'Higgins; DROP TABLE user",
      "Second school",
    ]);
  });

  it("refuses bad input before writing anything", { timeout: SLOW }, async () => {
    const base = ["--name", "Refused", "--admin-first-name", "A", "--admin-last-name", "B"];
    const cases: [string[], RegExp][] = [
      [[...base, "--time-zone", "Mars/Olympus", "--admin-phone", "+15550009003"], /not an IANA time zone/],
      [[...base, "--time-zone", "UTC", "--admin-phone", "5550009003"], /E\.164/],
      [[...base, "--time-zone", "UTC", "--admin-phone", "+1555"], /E\.164/],
      [
        [
          "--name",
          "Bad\nname",
          "--time-zone",
          "UTC",
          "--admin-phone",
          "+15550009003",
          "--admin-first-name",
          "A",
          "--admin-last-name",
          "B",
        ],
        /control character/,
      ],
      [["--name", "No admin", "--time-zone", "UTC"], /--admin-phone is required/],
      [[...base, "--time-zone", "UTC", "--admin-phone", "+15550009003", "--remote"], /not both/],
      [[...base, "--time-zone", "UTC", "--admin-phone", "+15550009003", "--unknown"], /Unknown option/],
    ];
    for (const [args, message] of cases) {
      const res = await admin(args);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr).toMatch(message);
      expect(res.stderr).toMatch(/Usage: npm run admin/);
    }
    const [schools, users] = await queries(
      "SELECT id FROM school WHERE name IN ('Refused', 'No admin') OR name LIKE 'Bad%'",
      "SELECT id FROM user WHERE phone = '+15550009003'",
    );
    expect(schools).toEqual([]);
    expect(users).toEqual([]);
  });
});
