/**
 * `npm run dev`: local secrets, the migrations and the demo data on the local D1, then `wrangler dev
 * --env dev` (through scripts/wrangler.ts, so /api/health knows the build). It prints what a person
 * needs: how many migrations were applied, that the demo data is ready, the URL, the docs page and
 * the demo phones; wrangler's own tables and JSON results only when a step fails. Arguments reach
 * wrangler dev (`npm run dev -- --port 9000`, `-- --test-scheduled`).
 *
 * `npm run db:setup` runs the same steps without the server (`--setup-only`); `npm run -s demo-day`
 * prints the demo's day the local database holds (`--demo-day`).
 */
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type DemoDay, demoDays, demoSeedFor } from "../src/db/demo-today";
import { seedByDatabase } from "../src/db/seed-split";
import { scriptStatements } from "../src/db/sql-script";
import { buildDefines } from "./build-info";
import { migrateCommands } from "./migrate";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const WRANGLER = createRequire(import.meta.url).resolve("wrangler/bin/wrangler.js");
const SEED = "seed/demo.sql";
/** The seed moved to this week (src/db/demo-today.ts): what wrangler loads, one file per database (`demo-today.DB.sql`). */
const SEED_TODAY = ".wrangler/demo-today.sql";
/** Which day the local database's demo was seeded for (deleted with it by `npm run db:reset`). */
const SEEDED_FOR = ".wrangler/state/v3/d1/demo-day.json";
const QUIET = { ...process.env, WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0" };

/** The demo's people, as the README's table names them. */
const DEMO_PHONES: [string, string][] = [
  ["+15550000001", "platform super-admin"],
  ["+15550000002", "school admin, Northside (school 1)"],
  ["+15550000003", "teacher, Northside"],
  ["+15550000004", "parent of Pablo and Paloma, Northside"],
  ["+15550000005", "bus driver of Bus 1, Northside"],
  ["+15550000012", "school admin, Southside (school 2)"],
];

/** Runs wrangler with its output kept; on failure prints it and leaves with wrangler's code. */
function wrangler(args: string[], what: string): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [WRANGLER, ...args], { cwd: ROOT, env: QUIET });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("close", (code) => {
      if (code === 0) return resolve(output);
      process.stderr.write(`${output}\n${what} failed (wrangler ${args.join(" ")} exited ${code})\n`);
      process.exit(code ?? 1);
    });
  });
}

async function setup() {
  if (!existsSync(`${ROOT}.dev.vars`)) {
    copyFileSync(`${ROOT}.dev.vars.example`, `${ROOT}.dev.vars`);
    console.log("Created .dev.vars from .dev.vars.example (local development secrets)");
  }
  console.log("Preparing the local database: migrations, then the demo data...");
  const fresh = !existsSync(`${ROOT}${dirname(SEEDED_FOR)}`);
  // Every local database: the platform's (DB) and the shard (DB_SHARD_1), docs/scaling.md "Shards".
  let migrated = "";
  for (const command of migrateCommands("dev", "--local")) {
    const output = await wrangler(command, "Migrating");
    if (command[3] === "DB" && command[1] === "migrations") migrated = output;
  }
  // The names wrangler marks applied to DB (each table it prints repeats them: count each once).
  const applied = new Set([...migrated.matchAll(/(\d{4}_[\w-]+\.sql)\s*│\s*✅/g)].map((m) => m[1]));
  console.log(migrationsLine(applied.size));
  // The demo lives in this week, in each school's zone: the seed as written is the anchor week's.
  const seed = readFileSync(`${ROOT}${SEED}`, "utf8");
  const now = new Date();
  mkdirSync(`${ROOT}.wrangler`, { recursive: true });
  // Each database its part (src/db/seed-split.ts): platform rows in DB, each school's rows and
  // their anchors in the school's database (the seed's shard map rows say which).
  for (const [binding, statements] of seedByDatabase(demoSeedFor(seed, now))) {
    const file = SEED_TODAY.replace(/\.sql$/, `.${binding}.sql`);
    writeFileSync(`${ROOT}${file}`, `${statements.join(";\n")};\n`);
    await wrangler(["d1", "execute", binding, "--local", "--env", "dev", "--file", file], "Loading the demo data");
  }
  console.log(demoLine(scriptStatements(seed).length));
  const days = demoDays(seed, now);
  // A database seeded before keeps its rows (INSERT OR IGNORE): say so when they are another day's.
  if (fresh) writeFileSync(`${ROOT}${SEEDED_FOR}`, `${JSON.stringify({ days })}\n`);
  console.log(demoDayLine(days, fresh ? days : seededFor()));
}

/** The demo days the local database was seeded for, if this script recorded them. */
function seededFor(): DemoDay[] | undefined {
  try {
    const { days } = JSON.parse(readFileSync(`${ROOT}${SEEDED_FOR}`, "utf8"));
    return Array.isArray(days) ? days : undefined;
  } catch {
    return undefined;
  }
}

const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const named = (days: DemoDay[]) => {
  const [first] = days;
  const label = (d: DemoDay) => `${WEEKDAYS[(new Date(`${d.day}T00:00:00Z`).getUTCDay() + 6) % 7]} ${d.day}`;
  return first && days.every((d) => d.day === first.day)
    ? label(first)
    : days.map((d) => `${label(d)} in school ${d.school}`).join(", ");
};

/**
 * What it says of the demo's day (src/db/demo-today.ts: today if a school day, else the next one,
 * in each school's zone), and, when the local database holds the demo of another day (the seed
 * never overwrites a row) or of a day not recorded (seeded before this script recorded it), how to
 * move it to today.
 */
export function demoDayLine(days: DemoDay[], seeded: DemoDay[] | undefined): string {
  const line = `Demo day: ${named(days)} (this afternoon's asks are pending; next week has the meetings)`;
  if (seeded && named(seeded) === named(days)) return line;
  const kept = seeded ? `of ${named(seeded)}` : "of its first run";
  return `${line}\n  The local database keeps the demo ${kept} (the seed never overwrites): \`npm run db:reset\` moves it to today.`;
}

/** What `npm run dev` says of the migrations (the README shows a first run's: test/node/readme.test.ts). */
export const migrationsLine = (applied: number) =>
  applied === 0
    ? "Migrations: the local database is up to date"
    : `Migrations: ${applied} applied to the local database`;

/**
 * What it says of the demo data: the seed's statements, counted as the tests and the docs page run
 * them (src/db/sql-script.ts; wrangler's own count joins some).
 */
export const demoLine = (statements: number) =>
  `Demo data ready (${statements} statements, idempotent): two schools, their people and routes`;

/**
 * What of wrangler's start-up output misleads, and goes: the second build it always runs when its
 * file watcher is ready ("The file src changed, restarting build..." though nothing changed), and
 * its hint to trigger cron with `/cdn-cgi/handler/scheduled`, which answers 500 here (with Workers
 * Static Assets the entry is the assets router, which has no scheduled handler); the banner below
 * says what works.
 */
/** A line without its terminal colours. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character starts a colour.
const plain = (line: string) => line.replace(/\x1b\[[0-9;]*m/g, "");

export class StartupFilter {
  private ready = false;
  private skipping = false;
  private rebuilt = false;

  /** Whether `shown` (a line, with wrangler's colours) is shown. */
  keep(shown: string): boolean {
    const line = plain(shown);
    if (/Ready on https?:\/\//.test(line)) this.ready = true;
    if (this.skipping) {
      // The cron hint ends with its "For more details" line.
      if (/For more details/.test(line)) this.skipping = false;
      return false;
    }
    if (/Scheduled Workers are not automatically triggered/.test(line)) {
      this.skipping = true;
      return false;
    }
    if (this.ready) return true;
    if (/^The file .* changed, restarting build\.\.\.$/.test(line)) {
      this.rebuilt = true;
      return false;
    }
    // The watcher's rebuild runs the build command a second time.
    return !(this.rebuilt && /^\[custom build\] Running:/.test(line));
  }
}

/** The environment `wrangler dev` runs with, from the developer's. */
export function serverEnv<E extends Record<string, string | undefined>>(env: E, tty: boolean) {
  return {
    // Miniflare fetches a sample `request.cf` from workers.cloudflare.com at start (cached 30 days);
    // offline it prints a stack trace (`getaddrinfo ENOTFOUND`) for it. The API reads nothing of
    // `cf`: the placeholder does (CLOUDFLARE_CF_FETCH_ENABLED=true fetches a real one).
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    ...env,
    WRANGLER_SEND_METRICS: "false",
    // "Ready on" is wrangler's info output: a WRANGLER_LOG of warn or less would hide it.
    ...(["debug", "log", "info"].includes(env.WRANGLER_LOG ?? "log") ? {} : { WRANGLER_LOG: "log" }),
    // Piped, wrangler would drop its colours: keep them for a terminal.
    ...(tty ? { FORCE_COLOR: "1" } : {}),
  };
}

/** Calls `each` with every complete line of a stream (and the rest when it ends). */
function lines(stream: NodeJS.ReadableStream, each: (line: string) => void) {
  let rest = "";
  stream.on("data", (chunk: Buffer) => {
    const parts = (rest + chunk.toString()).split("\n");
    rest = parts.pop() ?? "";
    for (const part of parts) each(part);
  });
  stream.on("end", () => {
    if (rest) each(rest);
  });
}

/** `wrangler dev`, its output passed on (less what misleads); once it is ready, what to do with it. */
function serve(args: string[]) {
  const child = spawn(process.execPath, [WRANGLER, "dev", "--env", "dev", ...args, ...buildDefines(ROOT)], {
    cwd: ROOT,
    env: serverEnv(process.env, !!process.stdout.isTTY),
    stdio: ["inherit", "pipe", "pipe"],
  });
  const filter = new StartupFilter();
  let told = false;
  const show = (out: NodeJS.WriteStream) => (line: string) => {
    if (!filter.keep(line)) return;
    out.write(`${line}\n`);
    const ready = /Ready on (https?:\/\/[^\s]+)/.exec(plain(line));
    if (told || !ready?.[1]) return;
    told = true;
    const url = ready[1].replace(/\/$/, "");
    const width = Math.max(...DEMO_PHONES.map(([p]) => p.length));
    const cron = args.includes("--test-scheduled")
      ? `curl "${url}/__scheduled?cron=*/5+*+*+*+*"   (the daily one: cron=0+2+*+*+*)`
      : "restart with `npm run dev -- --test-scheduled`, then GET /__scheduled?cron=*/5+*+*+*+*";
    console.log(
      [
        "",
        `API        ${url}   (health: ${url}/api/health)`,
        `Docs       ${url}/api/docs`,
        `Sign in    npm run -s token -- +15550000002${url.endsWith(":8787") ? "" : `   (with API_URL=${url})`}`,
        `Cron       ${cron}`,
        "Demo phones (codes go to the development outbox, GET /api/v1/dev/outbox?to=...):",
        ...DEMO_PHONES.map(([phone, who]) => `  ${phone.padEnd(width)}  ${who}`),
        "",
      ].join("\n"),
    );
  };
  lines(child.stdout, show(process.stdout));
  lines(child.stderr, show(process.stderr));
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
}

/** `npm run -s demo-day`: Northside's demo day in the local database (as recorded), else today's. */
export function demoDayOfDatabase(recorded: DemoDay[] | undefined, now: Date): string {
  const days = recorded ?? demoDays(readFileSync(`${ROOT}${SEED}`, "utf8"), now);
  return days.find((d) => d.school === 1)?.day ?? days[0]?.day ?? "";
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  if (args.includes("--demo-day")) {
    console.log(demoDayOfDatabase(seededFor(), new Date()));
    process.exit(0);
  }
  await setup();
  if (!args.includes("--setup-only")) serve(args);
}
