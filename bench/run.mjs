/**
 * `npm run bench`: builds the Worker as it deploys (printing its size and start-up time), serves the bundle in workerd through
 * Miniflare's Node API (production env, local D1/R2, 20,000 seeded documents, 400 students, 40 routes
 * with 3,000 riders), and measures each
 * endpoint against its own floor with autocannon. The floor of a row is a bare Worker
 * (bench/floor-worker.js) replaying exactly the D1 statements the endpoint made, captured from the
 * endpoint itself in the counting pass (bench/count-d1.mjs), so "× floor" is what routing, auth,
 * validation, shaping and logging cost on top of the same database work. Prints one table. See
 * docs/performance.md.
 *
 *   npm run bench                               the default rows
 *   node bench/run.mjs health permissions-list  only these rows (keys in `endpoints`)
 *   node bench/run.mjs dismissal-board          the board of 3,400 students, then the live board's fan-out
 *                                               to 500 subscribers and a gate's offline batch retried
 *   node bench/run.mjs route-run-boarding       a boarding recorded already, then the bus run (first boardings,
 *                                               40 buses' positions every 5 s, the live view under way) and a
 *                                               webhook event to 20 local receivers
 *   BENCH_ROUNDS=1 BENCH_ROUND_SECONDS=2 npm run bench   a quick smoke run
 *   BENCH_BASELINE=main npm run bench           that commit's Worker timed beside this one, per row
 *   node bench/run.mjs --profile documents-list  a CPU profile of the row and its floor (bench/profile.mjs)
 *   (also BENCH_WARMUP_SECONDS, BENCH_CONNECTIONS, BENCH_PROFILE_SECONDS, BENCH_PROFILE_INTERVAL_US, BENCH_PROFILE_TOP;
 *   BENCH_PLANS_OUT=<file> writes what each floor replays; BENCH_D1_PERSIST=<dir> keeps the D1 file)
 *
 * Exit code 1 when any row failed (a non-2xx answer, a connection error, a route not mounted, a
 * floor that does not replay); a baseline's failures are reported, not counted.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { Miniflare } from "miniflare";
import { tsImport } from "tsx/esm/api";
import { unstable_readConfig } from "wrangler";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BENCH = path.join(ROOT, "bench");

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DOCUMENTS_PER_SCHOOL = 10_000;
const COUNT_SAMPLES = 3;
/** The whole run stops by itself even if something hangs: this long for the build and the data, then re-armed for the timing. */
const SETUP_WATCHDOG_MS = 5 * 60 * 1000;

const AUTH_SECRET = "bench-secret-0123456789abcdef0123456789abcdef";
const NORTH = 1;

// ---------------------------------------------------------------- lifecycle

/**
 * Whatever happens (done, error, Ctrl-C, watchdog), the process ends through `exit`, where these
 * synchronous steps run (deleting the temp dir). Miniflare's own exit hook stops workerd there
 * too; a normal end also disposes it gracefully first.
 */
const onExit = [];
process.on("exit", () => {
  for (const fn of onExit.reverse()) {
    try {
      fn();
    } catch (err) {
      console.error(`cleanup: ${err instanceof Error ? err.message : err}`);
    }
  }
});
/** The command `run` is waiting for, if any. */
let child;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, async () => {
    console.error(`\n${signal}: stopping`);
    // Wait for the build to stop, or it could write into the temp dir after it is deleted.
    if (child) {
      const closed = new Promise((done) => child.once("close", done));
      child.kill("SIGTERM");
      await closed;
    }
    process.exit(130);
  });
}

/** Runs a command to completion (one at a time; a signal stops it by its pid, see above). */
function run(cmd, args, env, cwd = ROOT) {
  return new Promise((resolve, reject) => {
    child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      child = undefined;
      code === 0 ? resolve(output) : reject(new Error(`${cmd} ${args.join(" ")} exited ${code}\n${output}`));
    });
  });
}

// ---------------------------------------------------------------- build

/**
 * `wrangler deploy --dry-run`: the exact bundle a deploy would upload, its size, and its start-up
 * (bench/bundle.ts, shared with test/node/bundle.test.ts, which holds them to the budgets).
 */
const bundleTools = () => tsImport("./bundle.ts", import.meta.url);

async function build(outdir) {
  const { buildCommand, measureBuild } = await bundleTools();
  const { command, args, env } = buildCommand(outdir);
  await run(command, args, env);
  return { ...(await measureBuild(outdir)), root: ROOT };
}

/**
 * The Worker of another commit (`BENCH_BASELINE=<git ref>`), built the same way from that commit's
 * files: `git archive` into the temp dir, then node_modules. When the commit's package-lock.json is
 * this tree's, node_modules is a symlink to this tree's (nothing installed); otherwise `npm ci`
 * installs that commit's (from npm's cache where it can). Then that commit's own wrangler builds
 * it with that commit's wrangler.toml.
 */
async function buildBaseline(ref, tmp) {
  const sha = (await run("git", ["rev-parse", "--verify", `${ref}^{commit}`])).trim();
  const src = path.join(tmp, "baseline-src");
  const outdir = path.join(tmp, "baseline-dist");
  await mkdir(src, { recursive: true });
  const tar = path.join(tmp, "baseline.tar");
  await run("git", ["archive", "--format=tar", `--output=${tar}`, sha]);
  await run("tar", ["-xf", tar, "-C", src]);
  const lock = (dir) => readFile(path.join(dir, "package-lock.json"), "utf8").catch(() => "");
  const sameLock = (await lock(src)) === (await lock(ROOT));
  if (sameLock) {
    await symlink(path.join(ROOT, "node_modules"), path.join(src, "node_modules"), "dir");
  } else {
    console.log(`baseline ${ref}: its package-lock.json differs, npm ci (from npm's cache where it can)`);
    watchdog(SETUP_WATCHDOG_MS + 10 * 60 * 1000, "the set-up (npm ci of the baseline)");
    await run("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund"], {}, src);
  }
  const { buildCommand, measureBuild } = await bundleTools();
  const { args, env } = buildCommand(outdir);
  await run(path.join(src, "node_modules/.bin/wrangler"), args, env, src);
  return { ...(await measureBuild(outdir)), root: src, sha, sameLock };
}

// ---------------------------------------------------------------- Miniflare

/** A tree's wrangler.toml as wrangler itself reads it: compatibility settings and [vars]. */
function wranglerConfig(root = ROOT) {
  const config = unstable_readConfig({ config: path.join(root, "wrangler.toml") });
  return {
    vars: config.vars,
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
  };
}

/** The instance to dispose at the end. */
let running;

/**
 * One workerd, Workers sharing one D1 database: the bundle, the baseline's bundle if any, and the
 * floor (timed, over HTTP: the floor answers under /__floor/<row>, the baseline to the host
 * `baseline.bench`), and the same behind the recording wrapper (bench/count-d1.mjs; called one
 * request at a time through `getWorker`, never timed). The floor replays `plans` (one per row, from
 * the counting pass), a JSON binding: `setOptions` gives it the plans once they are known (the D1
 * data stays; workerd restarts).
 */
async function miniflareOptions(bundle, baseline, logs, plans, inspector) {
  const secrets = {
    ENVIRONMENT: "production",
    // What an operator sets (README, Deploy); no SMS is sent and no URL is used by the bench.
    S3_ENDPOINT: "https://bench.r2.cloudflarestorage.com",
    TWILIO_ACCOUNT_SID: "ACbench",
    TWILIO_AUTH_TOKEN: "bench",
    TWILIO_FROM: "+15550009999",
    AUTH_SECRET,
    S3_ACCESS_KEY_ID: "bench",
    S3_SECRET_ACCESS_KEY: "bench",
    // The shape of a Firebase key: the bench sends no push (no device is seeded).
    FCM_SERVICE_ACCOUNT: JSON.stringify({
      project_id: "bench",
      client_email: "push@bench.iam.gserviceaccount.com",
      private_key: "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n",
      token_uri: "https://oauth2.googleapis.com/token",
    }),
  };
  /** A build's settings: its own wrangler.toml's compatibility settings and vars. */
  const settings = (build) => {
    const { vars, compatibilityDate, compatibilityFlags } = wranglerConfig(build.root);
    return {
      compatibilityDate,
      compatibilityFlags,
      d1Databases: { DB: "bench-db" },
      r2Buckets: { DOCUMENTS: "bench-documents" },
      queueProducers: { PUSH_QUEUE: { queueName: "school-push" }, BULK_QUEUE: { queueName: "school-bulk" } },
      // The static assets the build's [build] command filled (the PDF fonts among them).
      assets: {
        directory: path.join(build.root, "public"),
        binding: "ASSETS",
        routerConfig: { has_user_worker: true },
      },
      bindings: { ...vars, ...secrets },
    };
  };
  const floor = await readFile(path.join(BENCH, "floor-worker.js"), "utf8");
  const counter = await readFile(path.join(BENCH, "count-d1.mjs"), "utf8");
  // A JSON binding takes JSON values only (no `undefined`).
  const floorSettings = { ...settings(bundle), bindings: { FLOOR_PLANS: JSON.parse(JSON.stringify(plans)) } };
  const counted = (name, dir, inner, base) => ({
    ...base,
    name,
    modulesRoot: dir,
    modules: [
      { type: "ESModule", path: path.join(dir, `${name}.mjs`), contents: counter },
      { type: "ESModule", path: path.join(dir, "worker.js"), contents: inner },
    ],
  });
  const workers = async (name, build, routes) => {
    const contents = await readFile(path.join(build.outdir, build.main), "utf8");
    // The build's Durable Objects (the live board's hub), served by the build's own Worker.
    const objects = unstable_readConfig({ config: path.join(build.root, "wrangler.toml") }).durable_objects.bindings;
    const base = {
      ...settings(build),
      durableObjects: Object.fromEntries(objects.map((o) => [o.name, { className: o.class_name, scriptName: name }])),
    };
    return [
      {
        ...base,
        name,
        ...(routes ? { routes } : {}),
        modules: [{ type: "ESModule", path: path.join(build.outdir, build.main), contents }],
        modulesRoot: build.outdir,
      },
      counted(`${name}-counted`, build.outdir, contents, base),
    ];
  };
  return {
    host: "127.0.0.1",
    port: 0,
    ...(process.env.BENCH_D1_PERSIST ? { resourcePersistencePath: process.env.BENCH_D1_PERSIST } : {}),
    // The DevTools Protocol of every Worker, for --profile (bench/profile.mjs).
    ...(inspector ? { inspectorPort: 0 } : {}),
    handleStructuredLogs: (log) => {
      logs.push(`${log.level}: ${log.message}`);
      if (logs.length > 50) logs.shift();
    },
    workers: [
      // The first Worker answers whatever no route claims.
      ...(await workers("api", bundle)),
      ...(baseline ? await workers("baseline", baseline, [`${BASELINE_HOST}/*`]) : []),
      {
        ...floorSettings,
        name: "floor",
        routes: ["*/__floor/*"],
        modules: [{ type: "ESModule", path: path.join(BENCH, "floor-worker.js"), contents: floor }],
        modulesRoot: BENCH,
      },
      counted("floor-counted", BENCH, floor, floorSettings),
    ],
  };
}

/** The host the baseline Worker answers (Miniflare routes by host). */
const BASELINE_HOST = "baseline.bench";

async function startMiniflare(bundle, baseline, logs, inspector) {
  const mf = new Miniflare(await miniflareOptions(bundle, baseline, logs, {}, inspector));
  running = mf;
  const url = await mf.ready;
  return {
    mf,
    url: url.origin,
    /** Gives the floor its plans (restarts workerd: the same URL, the same D1 data). */
    async setPlans(plans) {
      await mf.setOptions(await miniflareOptions(bundle, baseline, logs, plans, inspector));
      const again = await mf.ready;
      if (again.origin !== url.origin) throw new Error(`Miniflare moved from ${url.origin} to ${again.origin}`);
    },
  };
}

// ---------------------------------------------------------------- data

/** The project's own SQL splitting (src/db/sql-script.ts), loaded through tsx. */
const sqlScript = () => tsImport("../src/db/sql-script.ts", import.meta.url);

/**
 * Drizzle migration files, each applied in one batch with the row that records it in
 * `d1_migrations`, as `wrangler d1 migrations apply` does (health reads the migration level there).
 */
async function migrate(db) {
  const { MIGRATIONS_TABLE_SQL } = await tsImport("../scripts/libsql-migrate.ts", import.meta.url);
  await db.prepare(MIGRATIONS_TABLE_SQL).run();
  const dir = path.join(ROOT, "migrations");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".sql")).sort();
  for (const f of files) {
    const { migrationStatements } = await sqlScript();
    const statements = migrationStatements(await readFile(path.join(dir, f), "utf8"));
    const record = db.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(f);
    await db.batch([...statements.map((s) => db.prepare(s)), record]);
  }
  return files;
}

/**
 * seed/demo.sql, split the way the tests split it, whole into the one database this benchmark
 * binds (its shard map rows left out: every demo school on DB; src/db/seed-split.ts).
 */
async function seedDemo(db) {
  const { seedOnOneDatabase } = await tsImport("../src/db/seed-split.ts", import.meta.url);
  const statements = seedOnOneDatabase(await readFile(path.join(ROOT, "seed/demo.sql"), "utf8"));
  await db.batch(statements.map((s) => db.prepare(s)));
}

/** DOCUMENTS_PER_SCHOOL documents in each demo school, in one statement. */
async function seedDocuments(db) {
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
       INSERT INTO document (school_id, name, name_search, slug, entity, content_type)
       SELECT s.id, printf('report-%05d.pdf', n.i), printf('report-%05d.pdf', n.i), s.id || '/documents/' || printf('report-%05d.pdf', n.i),
              'documents', 'application/pdf'
       FROM n CROSS JOIN (SELECT id FROM school WHERE id IN (1, 2)) AS s`,
    )
    .bind(DOCUMENTS_PER_SCHOOL)
    .run();
  const rows = await db.prepare("SELECT school_id, count(*) AS n FROM document GROUP BY school_id").all();
  return rows.results;
}

const STUDENTS = 400;
const STUDENT_GROUPS = 4;

/**
 * STUDENTS students in the north school spread over STUDENT_GROUPS groups (levels alternate), each
 * with a guardian (the demo parent profile 1), in three statements: the detail reads real sub-selects.
 */
async function seedStudents(db) {
  await db.batch([
    db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO school_group (school_id, name, name_search, level, school_year)
         SELECT 1, printf('Bench group %d', n.i), printf('bench group %d', n.i), 'elementary', '2026-2027' FROM n`,
      )
      .bind(STUDENT_GROUPS),
    db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO student (school_id, family_id, first_name, last_name, first_name_search, last_name_search, id_number, level)
         SELECT 1, CASE WHEN n.i % 10 = 0 THEN 1 END, printf('Bench %d', n.i), printf('Student %05d', n.i),
                printf('bench %d', n.i), printf('student %05d', n.i),
                printf('B-%05d', n.i), CASE WHEN n.i % 2 = 0 THEN 'elementary' ELSE 'middle' END FROM n`,
      )
      .bind(STUDENTS),
    db.prepare(
      `INSERT INTO group_student (school_id, group_id, student_id)
       SELECT 1, g.id, s.id FROM student s
       JOIN school_group g ON g.school_id = 1 AND g.name = printf('Bench group %d', 1 + s.id % ${STUDENT_GROUPS})
       WHERE s.school_id = 1 AND s.id_number LIKE 'B-%'`,
    ),
    db.prepare(
      `INSERT INTO guardian (school_id, student_id, parent_id)
       SELECT 1, id, 1 FROM student WHERE school_id = 1 AND id_number LIKE 'B-%'`,
    ),
  ]);
  const group = await db.prepare("SELECT id FROM school_group WHERE school_id = 1 AND name = 'Bench group 1'").first();
  const student = await db
    .prepare("SELECT id FROM student WHERE school_id = 1 AND id_number = ?")
    .bind(`B-${String(STUDENTS / 2).padStart(5, "0")}`)
    .first();
  // The bench students (all guarded by the demo parent): whom the booking row books for, in turn.
  const children = await db
    .prepare("SELECT id FROM student WHERE school_id = 1 AND id_number LIKE 'B-%' ORDER BY id")
    .all();
  return { groupId: group.id, studentId: student.id, childIds: children.results.map((r) => r.id) };
}

const BENCH_EVENTS = 300;
const BENCH_ARTICLES = 300;

/**
 * BENCH_EVENTS events in the north school over the school year (one in five for the whole school,
 * the others for a level or a bench group: the demo parent's bench children are in those groups)
 * and BENCH_ARTICLES lost articles (one in three claimed), in one batch of set-based statements.
 */
async function seedEvents(db) {
  const n = (count) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})`;
  await db.batch([
    db.prepare(
      `${n(BENCH_EVENTS)}
       INSERT INTO event (school_id, title, title_search, start_local, end_local, time_zone, starts_at, ends_at, for_school, slug)
       SELECT 1, printf('Bench event %03d', i), printf('bench event %03d', i),
              strftime('%Y-%m-%dT10:00', '2026-09-01', '+' || i || ' days'), strftime('%Y-%m-%dT12:00', '2026-09-01', '+' || i || ' days'),
              'America/Mexico_City', strftime('%Y-%m-%dT16:00:00.000Z', '2026-09-01', '+' || i || ' days'),
              strftime('%Y-%m-%dT18:00:00.000Z', '2026-09-01', '+' || i || ' days'), i % 5 = 0, printf('bench-event-%05d', i)
       FROM n`,
    ),
    db.prepare(
      `INSERT INTO event_audience (school_id, event_id, level, group_id)
       SELECT 1, e.id,
              CASE WHEN CAST(substr(e.title, 13) AS INTEGER) % 5 IN (1, 2) THEN CASE CAST(substr(e.title, 13) AS INTEGER) % 3 WHEN 0 THEN 'elementary' WHEN 1 THEN 'middle' ELSE 'high' END END,
              CASE WHEN CAST(substr(e.title, 13) AS INTEGER) % 5 IN (3, 4) THEN
                (SELECT g.id FROM school_group g WHERE g.school_id = 1 AND g.name = printf('Bench group %d', 1 + CAST(substr(e.title, 13) AS INTEGER) % ${STUDENT_GROUPS})) END
       FROM event e WHERE e.school_id = 1 AND e.title LIKE 'Bench event %' AND e.for_school = 0`,
    ),
    db.prepare(
      `${n(BENCH_ARTICLES)}
       INSERT INTO lost_article (school_id, name, name_search, category, status, found_on, donate_after, claimed_by, claimed_at)
       SELECT 1, printf('Bench article %03d', i), printf('bench article %03d', i), 'clothing',
              CASE WHEN i % 3 = 0 THEN 'claimed' ELSE 'found' END,
              strftime('%Y-%m-%d', '2026-09-01', '+' || (i % 80) || ' days'), strftime('%Y-%m-%d', '2026-10-01', '+' || (i % 80) || ' days'),
              CASE WHEN i % 3 = 0 THEN 4 END, CASE WHEN i % 3 = 0 THEN '2026-11-20T12:00:00.000Z' END
       FROM n`,
    ),
  ]);
  const events = await db.prepare("SELECT count(*) AS n FROM event WHERE school_id = 1").first();
  const articles = await db.prepare("SELECT count(*) AS n FROM lost_article WHERE school_id = 1").first();
  return { events: events.n, articles: articles.n };
}

const RIDERS = 3_000;
const BENCH_ROUTES = 40;
const STOPS_PER_ROUTE = 10;
/** A Monday: every bench route runs, no demo holiday covers it. */
const LIST_DATE = "2027-03-01";

/**
 * The north school's transport at scale: BENCH_ROUTES vehicles and routes home of
 * STOPS_PER_ROUTE stops, RIDERS students spread over them (75 a route), each with a guardian (the
 * demo parent profile 1), in one batch of set-based statements.
 */
async function seedRoutes(db) {
  const n = (count) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})`;
  await db.batch([
    db.prepare(
      `${n(BENCH_ROUTES)} INSERT INTO transport (school_id, name, name_search, seats, driver_name)
       SELECT 1, printf('Bench bus %02d', i), printf('bench bus %02d', i), 90, 'Bench driver' FROM n`,
    ),
    db.prepare(
      `${n(BENCH_ROUTES)} INSERT INTO route (school_id, name, name_search, transport_id, direction, weekdays)
       SELECT 1, printf('Bench route %02d', i), printf('bench route %02d', i), t.id, 'home', 31
       FROM n JOIN transport t ON t.school_id = 1 AND t.name = printf('Bench bus %02d', i)`,
    ),
    db.prepare(
      `${n(STOPS_PER_ROUTE)} INSERT INTO route_stop (school_id, route_id, position, name, time)
       SELECT 1, r.id, n.i, printf('Parada %d, Calle Álamo %d', n.i, n.i * 10), printf('15:%02d', 5 + n.i * 5)
       FROM n CROSS JOIN route r WHERE r.school_id = 1 AND r.name LIKE 'Bench route %'`,
    ),
    db.prepare(
      `${n(RIDERS)} INSERT INTO student (school_id, first_name, last_name, first_name_search, last_name_search, id_number, level)
       SELECT 1, printf('Rider %d', i), printf('Muñoz %05d', i), printf('rider %d', i), printf('munoz %05d', i), printf('R-%05d', i), 'elementary' FROM n`,
    ),
    db.prepare(
      `INSERT INTO route_student (school_id, route_id, student_id, stop_id, weekdays, direction)
       SELECT 1, r.id, s.id, st.id, 31, 'home'
       FROM student s
       JOIN route r ON r.school_id = 1 AND r.name = printf('Bench route %02d', 1 + CAST(substr(s.id_number, 3) AS INTEGER) % ${BENCH_ROUTES})
       JOIN route_stop st ON st.route_id = r.id AND st.position = 1 + CAST(substr(s.id_number, 3) AS INTEGER) % ${STOPS_PER_ROUTE}
       WHERE s.school_id = 1 AND s.id_number LIKE 'R-%'`,
    ),
    db.prepare(
      `INSERT INTO guardian (school_id, student_id, parent_id)
       SELECT 1, id, 1 FROM student WHERE school_id = 1 AND id_number LIKE 'R-%'`,
    ),
  ]);
  const route = await db.prepare("SELECT id FROM route WHERE school_id = 1 AND name = 'Bench route 01'").first();
  const riders = await db.prepare("SELECT count(*) AS n FROM route_student WHERE school_id = 1").first();
  // For a route change onto route 01: its first stop, and a rider of route 02.
  const stop = await db.prepare("SELECT id FROM route_stop WHERE route_id = ? AND position = 1").bind(route.id).first();
  const rider = await db
    .prepare(
      "SELECT rs.student_id AS id FROM route_student rs JOIN route r ON r.id = rs.route_id WHERE r.school_id = 1 AND r.name = 'Bench route 02' ORDER BY rs.id LIMIT 1",
    )
    .first();
  // Today's run of route 01 under way (the school's today, as the Worker will compute it), for the
  // boarding row: the bench runs on the machine's clock, whatever weekday it is.
  const today = new Intl.DateTimeFormat("en-CA", { timeZone: "America/Mexico_City" }).format(new Date());
  const startedAt = new Date().toISOString();
  await db
    .prepare(
      "INSERT INTO route_run (school_id, route_id, date, status, started_at, created_at, updated_at) VALUES (1, ?, ?, 'running', ?, ?, ?)",
    )
    .bind(route.id, today, startedAt, startedAt, startedAt)
    .run();
  const ownRider = await db
    .prepare("SELECT student_id AS id FROM route_student WHERE route_id = ? ORDER BY id LIMIT 1")
    .bind(route.id)
    .first();
  return {
    routeId: route.id,
    riders: riders.n,
    stopId: stop.id,
    studentId: rider.id,
    runDate: today,
    startedAt,
    boarder: ownRider.id,
  };
}

/**
 * The north school's afternoon on LIST_DATE: the riders' weekday rows (what the rider rule keeps,
 * and what the day's summary reads for a student's home route), and exit permissions: a confirmed
 * one for every 10th rider (route changes, pickups by the demo parent, no after-school, absences
 * in turn) and a pending one for every 25th of the others. The school then has 3,800 active
 * students (the 3,000 riders, the 400 bench students, the demo's 400).
 */
async function seedAfternoon(db) {
  await db.batch([
    db.prepare(
      `WITH RECURSIVE d(w) AS (SELECT 1 UNION ALL SELECT w + 1 FROM d WHERE w < 5)
       INSERT INTO route_student_day (school_id, route_student_id, student_id, direction, weekday)
       SELECT rs.school_id, rs.id, rs.student_id, rs.direction, d.w
       FROM route_student rs CROSS JOIN d
       WHERE rs.school_id = 1 AND (rs.weekdays & (1 << (d.w - 1))) <> 0
         AND NOT EXISTS (SELECT 1 FROM route_student_day x WHERE x.route_student_id = rs.id)`,
    ),
    db
      .prepare(
        `INSERT INTO exit_permission (school_id, student_id, date, kind, status, route_id, stop_id, pickup_parent_id, decided_at, slug)
       SELECT 1, s.id, ?1,
              CASE n % 4 WHEN 0 THEN 'route_change' WHEN 1 THEN 'auto_pickup' WHEN 2 THEN 'no_after_school' ELSE 'absence' END,
              'confirmed',
              CASE WHEN n % 4 = 0 THEN (SELECT id FROM route WHERE school_id = 1 AND name = 'Bench route 01') END,
              CASE WHEN n % 4 = 0 THEN (SELECT st.id FROM route_stop st JOIN route r ON r.id = st.route_id
                                        WHERE r.school_id = 1 AND r.name = 'Bench route 01' AND st.position = 1) END,
              CASE WHEN n % 4 = 1 THEN 1 END,
              '2027-02-26T12:00:00.000Z', printf('bench-confirmed-%05d', n)
       FROM (SELECT id, CAST(substr(id_number, 3) AS INTEGER) / 10 AS n FROM student
             WHERE school_id = 1 AND id_number LIKE 'R-%' AND CAST(substr(id_number, 3) AS INTEGER) % 10 = 0) AS s`,
      )
      .bind(LIST_DATE),
    db
      .prepare(
        `INSERT INTO exit_permission (school_id, student_id, date, kind, status, slug)
       SELECT 1, id, ?1, 'absence', 'pending', printf('bench-pending-%05d', CAST(substr(id_number, 3) AS INTEGER))
       FROM student WHERE school_id = 1 AND id_number LIKE 'R-%'
         AND CAST(substr(id_number, 3) AS INTEGER) % 25 = 1`,
      )
      .bind(LIST_DATE),
  ]);
  const active = await db
    .prepare("SELECT count(*) AS n FROM student WHERE school_id = 1 AND status = 'active' AND deleted_at IS NULL")
    .first();
  const permissions = await db
    .prepare("SELECT count(*) AS n FROM exit_permission WHERE school_id = 1 AND date = ?")
    .bind(LIST_DATE)
    .first();
  return { students: active.n, permissions: permissions.n };
}

const GUARDIANS = 3_000;
const INBOX = 1_000;

/**
 * Notifications: a guardian (a parent of the north school) for each of the 3,000 riders, so the
 * school reaches 3,000 guardians besides its demo members; and 1,000 notifications in the demo
 * parent's inbox (user 4), a day's worth of minutes apart. Answers the last seeded notification id
 * (the send row removes what it added after it).
 */
async function seedNotifications(db) {
  await db.batch([
    db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO "user" (phone, first_name, last_name, first_name_search, last_name_search, status, language)
         SELECT printf('+1555888%04d', n.i), 'Guardian', printf('G%04d', n.i), 'guardian', printf('g%04d', n.i), 'active',
                CASE WHEN n.i % 2 = 0 THEN 'es' ELSE 'en' END FROM n`,
      )
      .bind(GUARDIANS),
    // The role's trigger makes each one's parent profile and school membership.
    db.prepare(
      `INSERT INTO role_user (school_id, user_id, role_id) SELECT 1, id, 5 FROM "user" WHERE phone LIKE '+1555888%'`,
    ),
    db.prepare(
      `INSERT INTO guardian (school_id, student_id, parent_id)
       SELECT 1, s.id, p.id FROM student s
       JOIN "user" u ON u.phone = printf('+1555888%04d', CAST(substr(s.id_number, 3) AS INTEGER))
       JOIN parent p ON p.school_id = 1 AND p.user_id = u.id
       WHERE s.school_id = 1 AND s.id_number LIKE 'R-%'`,
    ),
    db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO notification (school_id, key, category, title, body, audience, recipient_count, dispatched_at, fanned_out_at, created_at, updated_at)
         SELECT 1, printf('bench-inbox-%04d', n.i), CASE WHEN n.i % 3 = 0 THEN 'events' ELSE 'general' END,
                json_object('en', printf('Notice %d', n.i), 'es', printf('Aviso %d', n.i)),
                json_object('en', 'Bench text', 'es', 'Texto'), '{"users":[4]}', 1, t, t, t, t
         FROM (SELECT i, strftime('%Y-%m-%dT%H:%M:%fZ', '2026-11-01T00:00:00Z', printf('+%d minutes', i)) AS t FROM n) AS n`,
      )
      .bind(INBOX),
    db.prepare(
      `INSERT INTO notification_recipient (school_id, notification_id, user_id, created_at, updated_at)
       SELECT 1, id, 4, created_at, created_at FROM notification WHERE key LIKE 'bench-inbox-%'`,
    ),
  ]);
  const guardians = await db
    .prepare(
      "SELECT count(DISTINCT p.user_id) AS n FROM guardian g JOIN parent p ON p.id = g.parent_id WHERE g.school_id = 1",
    )
    .first();
  const members = await db.prepare("SELECT count(DISTINCT user_id) AS n FROM role_user WHERE school_id = 1").first();
  const last = await db.prepare("SELECT max(id) AS id FROM notification").first();
  return { guardians: guardians.n, members: members.n, lastId: last.id };
}

/**
 * The fan-out's own throughput: one notification to the whole north school sent through the API,
 * then its fan-out messages delivered to the Worker's queue handler one after the other (each
 * chunk's next message as the consumer would queue it), timing the handler alone: copies per second
 * through the consumer, without the queue's own delivery delay (`max_batch_timeout`).
 */
async function measureFanOut(mf, db, token) {
  const worker = await mf.getWorker("api");
  const res = await worker.fetch("http://bench.local/api/v1/notification", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "x-school-id": String(NORTH), "content-type": "application/json" },
    body: JSON.stringify({ title: "Fan-out bench", body: "One to the whole school", school: true }),
  });
  if (res.status !== 201) throw new Error(`fan-out bench: send answered ${res.status}: ${await res.text()}`);
  const sent = await res.json();
  const { key } = await db.prepare("SELECT key FROM notification WHERE id = ?").bind(sent.id).first();
  let after = 0;
  let consumerMs = 0;
  let messages = 0;
  for (;;) {
    const started = performance.now();
    const result = await worker.queue("school-push", [
      {
        id: `bench-fan-out-${messages}`,
        timestamp: new Date(),
        attempts: 1,
        body: { kind: "fan-out", key, schoolId: NORTH, after },
      },
    ]);
    consumerMs += performance.now() - started;
    messages++;
    if (result.retryMessages.length) throw new Error("fan-out bench: the consumer asked for a retry");
    const done = await db.prepare("SELECT fanned_out_at FROM notification WHERE id = ?").bind(sent.id).first();
    if (done.fanned_out_at) break;
    const next = await db
      .prepare("SELECT max(user_id) AS last FROM notification_recipient WHERE notification_id = ?")
      .bind(sent.id)
      .first();
    after = next.last;
  }
  const copies = await db
    .prepare("SELECT count(*) AS n FROM notification_recipient WHERE notification_id = ?")
    .bind(sent.id)
    .first();
  await db.prepare("DELETE FROM notification WHERE id = ?").bind(sent.id).run();
  return { recipients: sent.recipients, copies: copies.n, messages, consumerMs };
}

/** Subscribers of the live board in the fan-out measurement. */
const LIVE_SUBSCRIBERS = 500;
/** Events timed in it (a reunification started and ended, each an event on every subscriber's stream). */
const LIVE_EVENTS = 6;
/** The offline batch: its releases, and how often the gate sends it. */
const OFFLINE_RELEASES = 200;
const OFFLINE_SENDS = 3;

/**
 * A change reaching the live board's subscribers: `LIVE_SUBSCRIBERS` WebSockets on the north school's
 * stream of today (each with a one-use ticket, resuming with `after`: no snapshot each), then events
 * made through the API one at a time. A reunification's start and end stand for the release: the same
 * path from the commit to the subscribers (an event row in the verb's batch, a publish to the school's
 * Durable Object, one D1 read there, the fan-out), and neither depends on the day being a school day.
 * Timed from the request's start to each subscriber's receipt: p50 and p99 over every receipt.
 */
async function measureLiveFanOut(url, headers) {
  // Node 22 has a WebSocket; on Node 20, undici's (Miniflare's dependency, the same implementation).
  const WebSocket = globalThis.WebSocket ?? (await import("undici").catch(() => ({}))).WebSocket;
  if (!WebSocket) return { skipped: "this Node has no WebSocket (Node 22 or later, or undici)" };
  const api = (p, init = {}) =>
    fetch(`${url}${p}`, { ...init, headers: { ...headers, "content-type": "application/json" } });
  const seq = (await (await api("/api/v1/dismissal/live")).json()).events.at(-1)?.seq ?? 0;
  const sockets = [];
  const waiting = new Map();
  for (let i = 0; i < LIVE_SUBSCRIBERS; i++) {
    const { ticket } = await (await api("/api/v1/dismissal/live/ticket", { method: "POST" })).json();
    const ws = new WebSocket(
      `${url.replace(/^http/, "ws")}/api/v1/dismissal/live?ticket=${encodeURIComponent(ticket)}&after=${seq}`,
    );
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = () => reject(new Error(`live bench: subscriber ${i} could not connect`));
    });
    ws.onmessage = (e) => {
      const event = JSON.parse(String(e.data));
      waiting.get(event.type)?.(performance.now());
    };
    sockets.push(ws);
  }
  const receipts = [];
  /** The verb's own answer (it answers once the hub has sent the event: `published`). */
  const answers = [];
  try {
    for (let i = 0; i < LIVE_EVENTS; i++) {
      const type = i % 2 === 0 ? "reunification-started" : "reunification-ended";
      let left = sockets.length;
      const started = performance.now();
      const all = new Promise((resolve) => {
        waiting.set(type, (at) => {
          receipts.push(at - started);
          if (--left === 0) resolve();
        });
      });
      const res =
        i % 2 === 0
          ? await api("/api/v1/dismissal/reunification", {
              method: "POST",
              body: JSON.stringify({ reason: "Bench drill" }),
            })
          : await api("/api/v1/dismissal/reunification", { method: "DELETE" });
      answers.push(performance.now() - started);
      if (!res.ok) throw new Error(`live bench: ${type} answered ${res.status}: ${await res.text()}`);
      const timeout = new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`live bench: ${left} subscriber(s) did not get ${type} in 10 s`)), 10_000),
      );
      await Promise.race([all, timeout]);
      waiting.delete(type);
    }
  } finally {
    for (const ws of sockets) ws.close();
  }
  const sorted = receipts.sort((a, b) => a - b);
  return {
    subscribers: sockets.length,
    events: LIVE_EVENTS,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    verb: median(answers),
  };
}

/**
 * A gate's offline batch (`POST /api/v1/dismissal/release/batch`): `OFFLINE_RELEASES` releases of
 * the north school's riders, each with its client id, sent `OFFLINE_SENDS` times as a device retrying
 * would; the rows recorded must be exactly `OFFLINE_RELEASES`. A collector the day's plan does not
 * name is recorded and flagged for the office, so the figure holds on any day. Its rows are deleted after.
 */
async function measureOfflineBatch(url, headers, db, runId) {
  const children = await db
    .prepare("SELECT id FROM student WHERE school_id = ? AND id_number LIKE 'R-%' ORDER BY id LIMIT ?")
    .bind(NORTH, OFFLINE_RELEASES)
    .all();
  const guardian = await db
    .prepare("SELECT id FROM parent WHERE school_id = ? ORDER BY id LIMIT 1")
    .bind(NORTH)
    .first();
  const releases = children.results.map((c, i) => ({
    clientId: `bench-gate-${runId}-${i}`,
    release: { studentId: c.id, collector: { kind: "guardian", id: guardian.id }, gate: "bench" },
  }));
  const times = [];
  const outcomes = [];
  for (let i = 0; i < OFFLINE_SENDS; i++) {
    const started = performance.now();
    const res = await fetch(`${url}/api/v1/dismissal/release/batch`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ releases }),
    });
    times.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`offline bench: the batch answered ${res.status}: ${await res.text()}`);
    const counts = {};
    for (const r of (await res.json()).results) counts[r.result] = (counts[r.result] ?? 0) + 1;
    outcomes.push(counts);
  }
  const like = `bench-gate-${runId}-%`;
  const rows = await db
    .prepare("SELECT count(*) AS n FROM dismissal_release WHERE school_id = ? AND client_id LIKE ?")
    .bind(NORTH, like)
    .first();
  await db.prepare("DELETE FROM dismissal_release WHERE school_id = ? AND client_id LIKE ?").bind(NORTH, like).run();
  return { items: releases.length, sends: OFFLINE_SENDS, rows: rows.n, outcomes, times };
}

// ---------------------------------------------------------------- the bus run (issue 33)

/** Rounds of the 40 buses' positions, each bus one position every 5 s (BENCH_BUS_ROUNDS). */
const BUS_ROUNDS = Number(process.env.BENCH_BUS_ROUNDS ?? 6);
const BUS_BOARDINGS = 200;
const BUS_LIVE_READS = 30;

/**
 * Today's runs of the 40 bench routes under way (the machine's clock, the school's zone), their
 * riders on every weekday (the bench may run on a weekend; after the timed rows, which read
 * LIST_DATE, a Monday either way), then: first boardings of BUS_BOARDINGS riders one at a time
 * (p50/p99, and the D1 round trips of a few through the counting Worker, and of a repeat);
 * positions of the 40 buses, each sending its next one 5 s after its previous answer, for
 * BUS_ROUNDS rounds (p50/p99, refused, late: an answer slower than the 5 s to the next);
 * the demo parent's live view with the buses under way (p50, D1 round trips).
 */
async function measureBusRun(mf, url, headers, parentHeaders, db, transport) {
  const now = new Date().toISOString();
  await db.batch([
    db.prepare("UPDATE route SET weekdays = 127 WHERE school_id = ? AND name LIKE 'Bench route %'").bind(NORTH),
    db.prepare("UPDATE route_student SET weekdays = 127 WHERE school_id = ?").bind(NORTH),
    // A school day whatever the machine's weekday: Monday's hours on Saturday and Sunday too.
    db
      .prepare(
        `INSERT OR IGNORE INTO school_schedule (school_id, level, weekday, entry_time, dismissal_time, after_school_end_time, created_at, updated_at)
         SELECT s.school_id, s.level, w.d, s.entry_time, s.dismissal_time, s.after_school_end_time, s.created_at, s.updated_at
         FROM school_schedule s CROSS JOIN (SELECT 6 AS d UNION ALL SELECT 7) w WHERE s.school_id = ? AND s.weekday = 1`,
      )
      .bind(NORTH),
    db
      .prepare(
        `INSERT INTO route_run (school_id, route_id, date, status, started_at, created_at, updated_at)
         SELECT ?, r.id, ?, 'running', ?, ?, ? FROM route r WHERE r.school_id = ? AND r.name LIKE 'Bench route %'
         AND NOT EXISTS (SELECT 1 FROM route_run x WHERE x.route_id = r.id AND x.date = ?)`,
      )
      .bind(NORTH, transport.runDate, now, now, now, NORTH, transport.runDate),
  ]);
  const riders = (
    await db
      .prepare(
        `SELECT rs.route_id AS routeId, rs.student_id AS studentId, rs.stop_id AS stopId FROM route_student rs
         JOIN route r ON r.id = rs.route_id WHERE r.school_id = ? AND r.name LIKE 'Bench route %'
         AND NOT EXISTS (SELECT 1 FROM route_run_event e WHERE e.student_id = rs.student_id)
         ORDER BY rs.id LIMIT ?`,
      )
      .bind(NORTH, BUS_BOARDINGS + 4)
      .all()
  ).results;
  const routes = (
    await db
      .prepare("SELECT id FROM route WHERE school_id = ? AND name LIKE 'Bench route %' ORDER BY id")
      .bind(NORTH)
      .all()
  ).results.map((r) => r.id);
  const boarding = (r) => ({
    method: "POST",
    path: `/api/v1/route/${r.routeId}/run/boarding`,
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ studentId: r.studentId, event: "boarded", stopId: r.stopId, at: new Date().toISOString() }),
  });
  const timedFetch = async (r) => {
    const started = performance.now();
    const res = await fetch(`${url}${r.path}`, { method: r.method, headers: r.headers, body: r.body });
    const body = await res.text();
    return { ms: performance.now() - started, status: res.status, body };
  };
  const sorted = (xs) => [...xs].sort((a, b) => a - b);

  // First boardings: the D1 round trips of three, then the timing of the others, one at a time.
  const counted = await mf.getWorker("api-counted");
  const boardCalls = [];
  for (const r of riders.slice(0, 3)) {
    const t = await traced(counted, boarding(r));
    if (t.status !== 201)
      throw new Error(`bus bench: a boarding answered ${t.status}: ${String(t.body).slice(0, 300)}`);
    boardCalls.push(t.calls);
  }
  const repeat = await traced(counted, boarding(riders[0]));
  const boardMs = [];
  for (const r of riders.slice(4)) {
    const t = await timedFetch(boarding(r));
    if (t.status !== 201) throw new Error(`bus bench: a boarding answered ${t.status}: ${t.body.slice(0, 300)}`);
    boardMs.push(t.ms);
  }

  // Positions: every bus sends one, then its next 5 s after the answer (the server's window is 5 s
  // from the slot's first position, so a bus never sends into its own window), BUS_ROUNDS each.
  const positionMs = [];
  const statuses = {};
  let late = 0;
  const started = performance.now();
  await Promise.all(
    routes.map(async (routeId, i) => {
      // The 40 buses spread over the first 5 s, as phones are.
      await new Promise((resolve) => setTimeout(resolve, (i * 5000) / routes.length));
      for (let k = 0; k < BUS_ROUNDS; k++) {
        const lat = 19.4 + k * 0.001;
        const t = await timedFetch({
          method: "POST",
          path: `/api/v1/route/${routeId}/run/position`,
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ lat, lon: -99.13, at: new Date().toISOString(), speed: 8 }),
        });
        positionMs.push(t.ms);
        statuses[t.status] = (statuses[t.status] ?? 0) + 1;
        if (t.ms > 5000) late++;
        if (k < BUS_ROUNDS - 1) await new Promise((resolve) => setTimeout(resolve, 5000));
      }
    }),
  );
  const positionSeconds = (performance.now() - started) / 1000;

  // The guardian's live view with 40 buses under way (the demo parent: guardian of the 3,000 riders).
  const live = { method: "GET", path: "/api/v1/route/mine/live", headers: parentHeaders };
  // The second: the first of an isolate also reads the school's zone (then kept in memory).
  await traced(counted, live);
  const liveTrace = await traced(counted, live);
  const liveMs = [];
  for (let i = 0; i < BUS_LIVE_READS; i++) {
    const t = await timedFetch(live);
    if (t.status !== 200) throw new Error(`bus bench: the live view answered ${t.status}: ${t.body.slice(0, 300)}`);
    liveMs.push(t.ms);
  }
  const rides = JSON.parse((await timedFetch(live)).body).data.filter((d) => d.run === "running").length;
  const b = sorted(boardMs);
  const p = sorted(positionMs);
  const l = sorted(liveMs);
  return {
    boardings: b.length,
    boardP50: percentile(b, 50),
    boardP99: percentile(b, 99),
    boardCalls,
    repeatCalls: repeat.calls,
    buses: routes.length,
    positions: p.length,
    positionSeconds,
    positionP50: percentile(p, 50),
    positionP99: percentile(p, 99),
    statuses,
    late,
    liveP50: percentile(l, 50),
    liveP99: percentile(l, 99),
    liveCalls: liveTrace.calls,
    rides,
  };
}

/** Endpoints one event fans out to (issue 33's row). */
const FAN_OUT_ENDPOINTS = 20;

/**
 * One webhook event to FAN_OUT_ENDPOINTS endpoints, delivered through the webhook queue to real
 * local receivers (test/node/webhook-receiver.ts: each delivery verified with the
 * `standardwebhooks` library): the time from the request that raises the event (a student
 * created) until every receiver got it, signed. A Miniflare of its own: the same bundle in the
 * development environment (production refuses http and loopback URLs), the webhook queue with its
 * consumer as wrangler.toml sets it (batches of 10, 2 s timeout), a fresh D1 with the demo seed.
 */
async function measureWebhookFanOut(bundle) {
  const { startWebhookReceiver } = await tsImport("../test/node/webhook-receiver.ts", import.meta.url);
  const receiver = await startWebhookReceiver();
  const base = await miniflareOptions(bundle, undefined, [], {}, false);
  const api = base.workers[0];
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    // Its request lines are not the bench's output.
    handleStructuredLogs: () => {},
    workers: [
      {
        ...api,
        d1Databases: { DB: "bench-fan-out-db" },
        bindings: { ...api.bindings, ENVIRONMENT: "development" },
        queueProducers: { ...api.queueProducers, WEBHOOK_QUEUE: { queueName: "school-webhook" } },
        queueConsumers: { "school-webhook": { maxBatchSize: 10, maxBatchTimeout: 2, maxRetries: 12 } },
      },
    ],
  });
  try {
    const url = (await mf.ready).origin;
    const db = await mf.getD1Database("DB");
    await migrate(db);
    await seedDemo(db);
    const headers = {
      authorization: `Bearer ${await adminToken()}`,
      "x-school-id": String(NORTH),
      "content-type": "application/json",
    };
    const names = Array.from({ length: FAN_OUT_ENDPOINTS }, (_, i) => `bench-fan-${i}`);
    for (const name of names) {
      const res = await fetch(`${url}/api/v1/webhook`, {
        method: "POST",
        headers,
        body: JSON.stringify({ url: `${receiver.url}/hook/${name}`, eventTypes: ["student.created"] }),
      });
      if (res.status !== 201) throw new Error(`fan-out bench: an endpoint answered ${res.status}: ${await res.text()}`);
      const { secret } = await res.json();
      await fetch(`${receiver.url}/endpoints/${name}`, {
        method: "PUT",
        body: JSON.stringify({ secrets: [secret], now: Math.floor(Date.now() / 1000) }),
      });
    }
    const started = performance.now();
    const res = await fetch(`${url}/api/v1/student`, {
      method: "POST",
      headers,
      body: JSON.stringify({ firstName: "Fan", lastName: "Out" }),
    });
    const answered = performance.now() - started;
    if (res.status !== 201) throw new Error(`fan-out bench: the student answered ${res.status}: ${await res.text()}`);
    const arrived = new Map();
    let signed = 0;
    while (arrived.size < names.length && performance.now() - started < 60_000) {
      for (const name of names.filter((n) => !arrived.has(n))) {
        const got = await (await fetch(`${receiver.url}/received/${name}`)).json();
        if (got.length > 0) {
          arrived.set(name, performance.now() - started);
          if (got[0].verifiedWith.length > 0) signed++;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const times = [...arrived.values()].sort((a, b) => a - b);
    return { endpoints: names.length, arrived: arrived.size, signed, answered, first: times[0], all: times.at(-1) };
  } finally {
    await mf.dispose().catch(() => {});
    await receiver.close();
  }
}

const BENCH_TASKS = 100;
/** The bench's bookable slots: more than a run books (each request books one). */
const BENCH_SLOTS = 60_000;
/** Slot ids of the bench session start here: seven digits no other string parameter of a booking holds. */
const FIRST_BENCH_SLOT = 1_000_000;
/** The bench slot the n-th request books (BENCH_SLOTS of them, in turn; the row's reset frees them). */
const benchSlot = (n) => FIRST_BENCH_SLOT + 1 + (n % BENCH_SLOTS);

/**
 * Tasks and appointments: BENCH_TASKS published tasks, each to every demo student of the north
 * school (~400 recipients, their guardians' inbox rows: the demo parent has two copies of each),
 * and a published session whose BENCH_SLOTS slots (ids from FIRST_BENCH_SLOT) a booking takes one
 * at a time, with no limit of bookings per family (a bench knob: the API allows at most 10).
 */
async function seedTasks(db) {
  const n = (count) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})`;
  const demoStudents = "s.school_id = 1 AND s.deleted_at IS NULL";
  await db.batch([
    db.prepare(
      `${n(BENCH_TASKS)} INSERT INTO task (school_id, title, title_search, status, published_at, slug, audience, created_at, updated_at)
       SELECT 1, printf('Bench task %03d', i), printf('bench task %03d', i), 'published', '2026-11-02T12:00:00.000Z',
              printf('bench-task-%03d-slug', i), '{"studentIds":[],"groupIds":[],"levels":["preschool","elementary","middle","high"],"roleIds":[],"userIds":[]}',
              printf('2026-11-%02dT12:00:00.000Z', 1 + i % 20), printf('2026-11-%02dT12:00:00.000Z', 1 + i % 20) FROM n`,
    ),
    db.prepare(
      `INSERT INTO task_recipient (school_id, task_id, student_id, family_id, status, created_at, updated_at)
       SELECT 1, t.id, s.id, s.family_id, CASE WHEN s.id % 3 = 0 THEN 'completed' WHEN s.id % 3 = 1 THEN 'viewed' ELSE 'new' END, t.created_at, t.created_at
       FROM task t CROSS JOIN student s WHERE t.school_id = 1 AND t.title LIKE 'Bench task %' AND ${demoStudents}`,
    ),
    db.prepare(
      `INSERT INTO task_inbox (school_id, task_id, recipient_id, user_id, archived, created_at, updated_at)
       SELECT 1, r.task_id, r.id, p.user_id, 0, r.created_at, r.created_at
       FROM task_recipient r JOIN guardian g ON g.student_id = r.student_id JOIN parent p ON p.id = g.parent_id
       WHERE r.school_id = 1 AND r.task_id IN (SELECT id FROM task WHERE school_id = 1 AND title LIKE 'Bench task %')
       ORDER BY r.id`,
    ),
    db.prepare(
      `INSERT INTO task (school_id, title, title_search, status, published_at, slug, audience, requires_appointment)
       VALUES (1, 'Bench meetings', 'bench meetings', 'published', '2026-11-02T12:00:00.000Z', 'bench-meetings-slug',
               '{"studentIds":[],"groupIds":[],"levels":[],"roleIds":[],"userIds":[2]}', 1)`,
    ),
    db.prepare(
      `INSERT INTO appointment_session (school_id, task_id, title, title_search, slot_minutes, capacity, bookings_per_family, status, published_at)
       SELECT 1, id, 'Bench meetings', 'bench meetings', 5, 1, 1000000, 'published', '2026-11-02T12:00:00.000Z'
       FROM task WHERE school_id = 1 AND slug = 'bench-meetings-slug'`,
    ),
    db.prepare(
      `INSERT INTO appointment_day (school_id, session_id, date, windows)
       SELECT 1, id, '2030-06-03', '[{"start":"00:00","end":"23:55","teacherId":null}]' FROM appointment_session WHERE title = 'Bench meetings'`,
    ),
    db.prepare(
      `${n(BENCH_SLOTS)} INSERT INTO appointment_slot (id, school_id, session_id, day_id, date, start, end, starts_at, ends_at, capacity, booked)
       SELECT ${FIRST_BENCH_SLOT} + i, 1, d.session_id, d.id, '2030-06-03', '09:00', '09:05',
              strftime('%Y-%m-%dT%H:%M:%fZ', '2030-06-03T15:00:00', printf('+%d seconds', i)),
              strftime('%Y-%m-%dT%H:%M:%fZ', '2030-06-03T15:05:00', printf('+%d seconds', i)), 1, 0
       FROM n CROSS JOIN appointment_day d WHERE d.date = '2030-06-03' AND d.windows LIKE '%23:55%'`,
    ),
  ]);
  const task = await db.prepare("SELECT id FROM task WHERE school_id = 1 AND title = 'Bench task 001'").first();
  const recipients = await db
    .prepare("SELECT count(*) AS n FROM task_recipient WHERE task_id = ?")
    .bind(task.id)
    .first();
  const mine = await db
    .prepare("SELECT count(*) AS n FROM task_inbox WHERE school_id = 1 AND user_id = 4 AND archived = 0")
    .first();
  return { taskId: task.id, recipients: recipients.n, parentCopies: mine.n };
}

/** An access token for the north school's admin (user 2), signed by the app's own code. */
const adminToken = () => roleToken(2, "school-admin");

/** An access token for the north school's demo parent (user 4, +15550000004). */
const parentToken = () => roleToken(4, "parent");

/**
 * The callers' headers, the same objects every row sends: `renew` signs their tokens again before
 * they could expire (an access token lives 10 minutes; a run with a baseline lasts longer).
 */
function callersOf() {
  const auth = { authorization: "", "x-school-id": String(NORTH) };
  const asParent = { authorization: "", "x-school-id": String(NORTH) };
  let signedAt = 0;
  return {
    auth,
    asParent,
    async renew() {
      if (Date.now() - signedAt < 4 * 60_000) return;
      auth.authorization = `Bearer ${await adminToken()}`;
      asParent.authorization = `Bearer ${await parentToken()}`;
      signedAt = Date.now();
    },
  };
}

/** An access token for `userId` holding built-in `role` in the north school. */
async function roleToken(userId, role) {
  const { PermissionSet } = await tsImport("../src/lib/access.ts", import.meta.url);
  const { grantsOf } = await tsImport("../src/modules/index.ts", import.meta.url);
  const { signAccessToken } = await tsImport("../src/lib/tokens.ts", import.meta.url);
  const bitmap = PermissionSet.encode(grantsOf(role).map((p) => p.id));
  return signAccessToken(AUTH_SECRET, new Date(), { userId, isSuperAdmin: false, schools: { [NORTH]: bitmap } });
}

// ---------------------------------------------------------------- endpoints

/**
 * Each row: how to build one request (`n` makes writes unique: `unique(n)` is the part of the
 * request that must differ, and the floor swaps it into the statements it replays), whether it is
 * left out of the default set, and how to undo its writes.
 */
function endpoints({ callers, documentId, runId, students, transport, notifications, tasks }) {
  const { auth, asParent } = callers;
  const createName = (n) => `bench-${runId}-${n}`;
  const newName = (n) => `Renamed ${runId} ${n}`;
  return [
    {
      key: "documents-list",
      label: "GET /api/v1/documents?page=1&pageSize=20",
      request: () => ({ method: "GET", path: "/api/v1/documents?page=1&pageSize=20", headers: auth }),
    },
    {
      key: "documents-get",
      label: "GET /api/v1/documents/{id}",
      request: () => ({ method: "GET", path: `/api/v1/documents/${documentId}`, headers: auth }),
    },
    {
      key: "documents-create",
      label: "POST /api/v1/documents",
      unique: createName,
      request: (n) => {
        const name = `${createName(n)}.pdf`;
        return {
          method: "POST",
          path: "/api/v1/documents",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ name, slug: `${NORTH}/documents/${name}` }),
        };
      },
      // Every other row is measured on the seeded data set, not on it plus what this row added
      // (its floor's rows included: they carry the same names).
      reset: (db) =>
        db
          .prepare("DELETE FROM document WHERE school_id = ? AND slug LIKE ?")
          .bind(NORTH, `${NORTH}/documents/bench-${runId}-%`)
          .run(),
    },
    {
      key: "documents-update",
      label: "PUT /api/v1/documents/{id}",
      unique: newName,
      request: (n) => ({
        method: "PUT",
        path: `/api/v1/documents/${documentId}`,
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ name: newName(n) }),
      }),
    },
    {
      key: "student-list",
      label: "GET /api/v1/student?group=&level=elementary&pageSize=20 (of 400)",
      request: () => ({
        method: "GET",
        path: `/api/v1/student?group=${students.groupId}&level=elementary&page=1&pageSize=20`,
        headers: auth,
      }),
    },
    {
      key: "student-get",
      label: "GET /api/v1/student/{id}/detail",
      request: () => ({ method: "GET", path: `/api/v1/student/${students.studentId}/detail`, headers: auth }),
    },
    {
      key: "route-family",
      label: "GET /api/v1/route/mine?date= (the demo parent's children's routes)",
      request: () => ({ method: "GET", path: "/api/v1/route/mine?date=2026-11-23", headers: asParent }),
    },
    {
      // The driver's phone sending a boarding again (a retry after a lost answer, the common case
      // of a flaky connection): idempotent per rider, event and run: the boarding's guarded batch
      // aborts, one read answers the first record (2 round trips). The first record of a boarding
      // (ONE round trip) is timed after the table (measureBusRun), and counted in
      // test/route-run.test.ts "round trips".
      key: "route-run-boarding",
      label: "POST /api/v1/route/{id}/run/boarding (a boarding recorded already: its guard aborts, one read answers)",
      request: () => ({
        method: "POST",
        path: `/api/v1/route/${transport.routeId}/run/boarding`,
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({
          studentId: transport.boarder,
          event: "boarded",
          stopId: transport.stopId,
          // The run's start (seeded at the machine's now): within the bounds of the phone's clock.
          at: transport.startedAt,
          insistReason: "bench: the machine's day may not be a school day",
        }),
      }),
    },
    {
      key: "route-live",
      label: "GET /api/v1/route/mine/live (the demo parent: guardian of 3,000 riders, their rides today)",
      request: () => ({ method: "GET", path: "/api/v1/route/mine/live", headers: asParent }),
    },
    {
      key: "route-list",
      label: "GET /api/v1/route-availability-student/route/{id}/final-status (75 riders)",
      request: () => ({
        method: "GET",
        path: `/api/v1/route-availability-student/route/${transport.routeId}/final-status?date=${LIST_DATE}`,
        headers: auth,
      }),
    },
    {
      key: "route-lists-pdf",
      label: "GET /api/v1/route-availability-student/final-status/pdf (40 routes, 3,000 riders)",
      request: () => ({
        method: "GET",
        path: `/api/v1/route-availability-student/final-status/pdf?date=${LIST_DATE}`,
        headers: auth,
      }),
    },
    {
      key: "transportation-summary",
      label: "GET /api/v1/transportation-summary?date= (a page of 20 of 3,800 students, totals per way)",
      request: () => ({
        method: "GET",
        path: `/api/v1/transportation-summary?date=${LIST_DATE}&page=1&pageSize=20`,
        headers: auth,
      }),
    },
    {
      key: "exit-permission-dry-run",
      label: "POST /api/v1/exit-permission/dry-run (a route change: the rules over one snapshot)",
      request: () => ({
        method: "POST",
        path: "/api/v1/exit-permission/dry-run",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({
          kind: "route_change",
          studentId: transport.studentId,
          date: LIST_DATE,
          routeId: transport.routeId,
          stopId: transport.stopId,
        }),
      }),
    },
    {
      // The same verdict answered in Spanish: its warnings' messages read from the catalogue.
      key: "exit-permission-dry-run-es",
      label: "POST /api/v1/exit-permission/dry-run, Accept-Language: es (the verdict's messages in Spanish)",
      optional: true,
      request: () => ({
        method: "POST",
        path: "/api/v1/exit-permission/dry-run",
        headers: { ...auth, "content-type": "application/json", "accept-language": "es" },
        body: JSON.stringify({
          kind: "route_change",
          studentId: transport.studentId,
          date: LIST_DATE,
          routeId: transport.routeId,
          stopId: transport.stopId,
        }),
      }),
    },
    {
      // Staff asking for a rider: the rules over one snapshot (one read), then one batch of the
      // permission and its audit row. LIST_DATE is beyond the weeks ahead: for staff a warning.
      key: "exit-permission-create",
      label: "POST /api/v1/exit-permission (a route change asked by staff: the rules, then one batch)",
      unique: (n) => `bench-${runId}-${n}`,
      request: (n) => ({
        method: "POST",
        path: "/api/v1/exit-permission",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({
          kind: "route_change",
          studentId: transport.studentId,
          date: LIST_DATE,
          routeId: transport.routeId,
          stopId: transport.stopId,
          reason: `bench-${runId}-${n}`,
        }),
      }),
      reset: (db) =>
        db
          .prepare("DELETE FROM exit_permission WHERE school_id = ? AND reason LIKE ?")
          .bind(NORTH, `bench-${runId}-%`)
          .run(),
    },
    {
      key: "events-parent-list",
      label: "GET /api/v1/event?pageSize=20 (the demo parent: their children's levels and groups, of 300)",
      request: () => ({ method: "GET", path: "/api/v1/event?page=1&pageSize=20", headers: asParent }),
    },
    {
      key: "lost-articles-list",
      label: "GET /api/v1/lost-article?status=found&pageSize=20 (a parent browsing, of 300)",
      request: () => ({
        method: "GET",
        path: "/api/v1/lost-article?status=found&page=1&pageSize=20",
        headers: asParent,
      }),
    },
    {
      key: "tasks-mine",
      label: "GET /api/v1/pending/mine?status=pending (the demo parent: a page of 20 of their ~130 to do)",
      request: () => ({
        method: "GET",
        path: "/api/v1/pending/mine?status=pending&page=1&pageSize=20",
        headers: asParent,
      }),
    },
    {
      key: "notifications-inbox",
      label: `GET /api/v1/notification?pageSize=20 (the demo parent's inbox of ${INBOX})`,
      request: () => ({ method: "GET", path: "/api/v1/notification?page=1&pageSize=20", headers: asParent }),
    },
    {
      key: "notification-send",
      label: `POST /api/v1/notification to the whole school (${notifications.members} members, ${GUARDIANS} of them guardians; the request alone)`,
      // The notification's key is the Worker's own (a UUID): the floor makes a fresh one per replay.
      uuids: true,
      request: () => ({
        method: "POST",
        path: "/api/v1/notification",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ title: "Snow day", body: "School is closed tomorrow", school: true }),
      }),
      reset: (db) => db.prepare("DELETE FROM notification WHERE id > ?").bind(notifications.lastId).run(),
    },
    {
      key: "task-detail",
      label: "GET /api/v1/pending/{id}/detail (a task and its ~400 recipients)",
      request: () => ({ method: "GET", path: `/api/v1/pending/${tasks.taskId}/detail`, headers: auth }),
    },
    {
      key: "appointment-book",
      label:
        "POST /api/v1/time-slot/{id}/appointment (the demo parent books a slot: capacity and family checks inside the write)",
      unique: (n) => String(benchSlot(n)),
      request: (n) => ({
        method: "POST",
        path: `/api/v1/time-slot/${benchSlot(n)}/appointment`,
        headers: { ...asParent, "content-type": "application/json" },
        // One of the parent's children in turn: each family holds few bookings, as in a school.
        body: JSON.stringify({ studentId: students.childIds[n % students.childIds.length] }),
      }),
      // The request counter runs over every row of a run: the slots are taken in turn and freed
      // after each timed run (the endpoint's bookings and the floor's), so any number of rows before
      // this one still finds free slots.
      reset: (db) =>
        db.batch([
          db.prepare(
            "DELETE FROM appointment WHERE session_id IN (SELECT id FROM appointment_session WHERE title = 'Bench meetings')",
          ),
          db.prepare("UPDATE appointment_slot SET booked = 0 WHERE id > ? AND booked > 0").bind(FIRST_BENCH_SLOT),
        ]),
    },
    {
      key: "audit-log-list",
      label: "GET /api/v1/audit-log?page=1&pageSize=20",
      request: () => ({ method: "GET", path: "/api/v1/audit-log?page=1&pageSize=20", headers: auth }),
    },
    {
      // The day's board of the north school's 3,400 active students (3,000 riders): one D1 round trip.
      key: "dismissal-board",
      label: `GET /api/v1/dismissal/board?date=${LIST_DATE}`,
      request: () => ({ method: "GET", path: `/api/v1/dismissal/board?date=${LIST_DATE}`, headers: auth }),
    },
    {
      key: "health",
      label: "GET /api/health",
      request: () => ({ method: "GET", path: "/api/health", headers: {} }),
    },
    {
      key: "permissions-list",
      label: "GET /api/v1/permission?page=1&pageSize=20",
      optional: true,
      request: () => ({ method: "GET", path: "/api/v1/permission?page=1&pageSize=20", headers: auth }),
    },
    {
      key: "permissions-get",
      label: "GET /api/v1/permission/{id}",
      optional: true,
      request: () => ({ method: "GET", path: "/api/v1/permission/15", headers: auth }),
    },
  ];
}

/**
 * The same request to the row's floor: same method, headers and body (the wire costs the same;
 * the floor reads none of it), path /__floor/<row>, and the unique value for writes.
 */
function floorRequest(endpoint, n) {
  const r = endpoint.request(n);
  const u = endpoint.unique ? `?u=${encodeURIComponent(endpoint.unique(n))}` : "";
  return { ...r, path: `/__floor/${endpoint.key}${u}` };
}

/** What a counting-pass answer says (bench/count-d1.mjs with `x-bench-trace: 1`). */
async function traced(worker, r) {
  const res = await worker.fetch(`http://127.0.0.1${r.path}`, {
    method: r.method,
    headers: { ...r.headers, "x-bench-trace": "1" },
    body: r.body,
  });
  if (res.status !== 200) throw new Error(`the recording wrapper answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** The SQL a trace ran, step by step (parameters left out): samples of one row must agree. */
const shape = (trace) =>
  JSON.stringify(trace.map((s) => [s.kind, s.group, s.sql ?? s.method, s.statements?.map((t) => t.sql)]));

/**
 * The counting pass: a few requests one at a time through the recording wrapper, each reporting
 * its D1 round trips and the statements it ran. The last sample's statements become the row's
 * floor plan (the first request of a row may differ: a module loads, a cache fills).
 */
async function countD1(mf, workerName, endpoint, counter) {
  const worker = await mf.getWorker(workerName);
  const samples = [];
  for (let i = 0; i < COUNT_SAMPLES; i++) {
    const n = counter.next++;
    samples.push({ n, ...(await traced(worker, endpoint.request(n))) });
  }
  const counts = samples.map((s) => s.calls);
  const min = Math.min(...counts);
  const max = Math.max(...counts);
  const last = samples.at(-1);
  const failed = samples.find((s) => s.status < 200 || s.status >= 300);
  return {
    calls: min === max ? String(min) : `${min}-${max}`,
    statuses: samples.map((s) => s.status),
    detail: failed ? String(failed.body).slice(0, 300) : "",
    // Warm samples (all but the first) that ran other SQL than the last one.
    varies: samples.slice(1).some((s) => shape(s.trace) !== shape(last.trace)),
    plan: {
      status: last.status,
      unique: endpoint.unique?.(last.n),
      fresh: freshTokens(samples.at(-2)?.trace ?? [], last.trace),
      uuids: endpoint.uuids,
      trace: last.trace,
    },
  };
}

/** Every string parameter of a trace's statements. */
const stringParams = (trace) =>
  trace
    .flatMap((s) => [s, ...(s.statements ?? [])])
    .flatMap((s) => (s.params ?? []).filter((p) => typeof p === "string"));

/**
 * Random tokens the endpoint made for one request (a new record's public slug, the request id the
 * audit row keeps): token-like strings of the last sample that the one before did not have. The
 * floor writes a fresh random token of the same shape in their place on every request, as the
 * endpoint does; replayed as captured, a unique slug would fail the floor's second insert.
 */
function freshTokens(before, last) {
  const seen = new Set(stringParams(before));
  const tokens = new Set();
  for (const p of stringParams(last)) if (/^[A-Za-z0-9_-]{16,64}$/.test(p) && !seen.has(p)) tokens.add(p);
  return [...tokens];
}

/** The floor answers as the endpoint did, with as many D1 round trips: else its ratio means nothing. */
async function checkFloor(mf, endpoint, plan, counter) {
  const worker = await mf.getWorker("floor-counted");
  for (let i = 0; i < 2; i++) {
    const answer = await traced(worker, floorRequest(endpoint, counter.next++));
    if (answer.status !== plan.status)
      return `the floor answered ${answer.status}: ${String(answer.body).slice(0, 300)}`;
    const calls = plan.trace.filter((s) => s.kind !== "r2").length;
    if (answer.calls !== calls) return `the floor made ${answer.calls} D1 calls, the endpoint ${calls}`;
  }
  return undefined;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

/**
 * CPU time (user + system, ms) of the workerd processes this bench started: the Workers, D1, R2
 * and workerd's HTTP together, on every thread. Unlike req/s it does not move with the machine's
 * other load or the hypervisor's steal: what a request costs, not how fast the machine was then.
 */
const TICK_MS = 10; // USER_HZ is 100 on Linux
function workerdCpuMs() {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    const close = stat.lastIndexOf(")");
    if (stat.slice(stat.indexOf("(") + 1, close) !== "workerd") continue;
    const fields = stat.slice(close + 2).split(" ");
    if (Number(fields[1]) !== process.pid) continue; // another workerd (a dev server)
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * TICK_MS;
}
const cpuAccounting = process.platform === "linux";

/**
 * One autocannon run. Latencies come from autocannon's per-response event (sub-millisecond; its
 * own histogram rounds to whole milliseconds); requests/s is autocannon's per-second average.
 */
async function load(base, target, counter, seconds) {
  const first = target.request(counter.next);
  const latencies = [];
  const instance = autocannon({
    url: `${base}${first.path}`,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    method: first.method,
    headers: first.headers,
    requests: [
      {
        setupRequest: (req) => {
          const r = target.request(counter.next++);
          return { ...req, method: r.method, path: r.path, headers: r.headers, body: r.body };
        },
      },
    ],
  });
  instance.on("response", (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  const cpuBefore = cpuAccounting ? workerdCpuMs() : NaN;
  const result = await instance;
  const cpuMs = cpuAccounting ? workerdCpuMs() - cpuBefore : NaN;
  latencies.sort((a, b) => a - b);
  return {
    rps: result.requests.average,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    total: result.requests.total,
    cpuUs: (cpuMs * 1000) / result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([k, v]) => [k, v.count])),
  };
}

/**
 * Medians over the timed rounds; failures counted over the warm-up too. `floor` (the row's floor's
 * runs, same rounds) gives the ratio: each round's req/s over the floor's in the same round, which
 * ran right next to it, under the same machine load.
 */
function summarise(run, floor) {
  const { warm, rounds } = run;
  const all = [warm, ...rounds];
  const statusCodes = {};
  for (const r of all) for (const [k, v] of Object.entries(r.statusCodes)) statusCodes[k] = (statusCodes[k] ?? 0) + v;
  return {
    rps: median(rounds.map((r) => r.rps)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    ratio: floor ? median(rounds.map((r, i) => r.rps / floor.rounds[i].rps)) : undefined,
    cpuUs: median(rounds.map((r) => r.cpuUs)),
    // The same ratio by workerd's CPU time per request: the floor's over this one's.
    cpuRatio: floor ? median(rounds.map((r, i) => floor.rounds[i].cpuUs / r.cpuUs)) : undefined,
    rounds: rounds.map((r) => Math.round(r.rps)),
    non2xx: all.reduce((a, r) => a + r.non2xx, 0),
    errors: all.reduce((a, r) => a + r.errors, 0),
    statusCodes,
  };
}

const failures = (m) =>
  m.non2xx + m.errors > 0
    ? `${m.non2xx} non-2xx, ${m.errors} errors/timeouts; status codes ${JSON.stringify(m.statusCodes)}`
    : undefined;

// ---------------------------------------------------------------- report

function machine() {
  const cpus = os.cpus();
  return {
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    cpus: `${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown"}`,
    memory: `${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    node: process.version,
  };
}

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const fmt = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

const round = (n) => (Number.isFinite(n) ? String(Math.round(n)) : "-");

/** The table: one line per row; with a baseline, its figures beside the current build's. */
function table(rows, baseline) {
  const header = baseline
    ? [
        "endpoint",
        `${baseline.ref} req/s`,
        "now req/s",
        "floor req/s",
        `${baseline.ref} × floor`,
        "now × floor",
        `now ÷ ${baseline.ref}`,
        `workerd CPU µs/req (${baseline.ref} / now / floor)`,
        `× floor by CPU (${baseline.ref} / now)`,
        `p50 ms (${baseline.ref} / now)`,
        `p99 ms (${baseline.ref} / now)`,
        `D1 calls/req (${baseline.ref} / now)`,
        "non-2xx",
        "result",
      ]
    : [
        "endpoint",
        "req/s",
        "p50 ms",
        "p99 ms",
        "D1 calls/req",
        "floor req/s",
        "× floor",
        "workerd CPU µs/req (floor / now)",
        "× floor by CPU",
        "non-2xx",
        "result",
      ];
  const lines = rows.map((r) => {
    // A failed row shows no speed: numbers from error answers would read as results.
    const ok = r.verdict === "ok";
    const m = ok ? r.results.api : undefined;
    const f = ok ? r.results.floor : undefined;
    const b = ok ? r.results.baseline : undefined;
    const non2xx = Object.values(r.results ?? {}).reduce((a, x) => a + x.non2xx, 0);
    const verdict = [r.verdict, ...(r.notes ?? [])].join("; ");
    if (!baseline) {
      return [
        r.label,
        round(m?.rps),
        m ? fmt(m.p50) : "-",
        m ? fmt(m.p99) : "-",
        r.calls ?? "-",
        round(f?.rps),
        m ? fmt(m.ratio) : "-",
        `${round(f?.cpuUs)} / ${round(m?.cpuUs)}`,
        m ? fmt(m.cpuRatio) : "-",
        r.results ? String(non2xx) : "-",
        verdict,
      ];
    }
    const pair = (x, y, digits) =>
      `${x === undefined ? "n/a" : fmt(x, digits)} / ${y === undefined ? "-" : fmt(y, digits)}`;
    return [
      r.label,
      b ? round(b.rps) : "n/a",
      round(m?.rps),
      round(f?.rps),
      b ? fmt(b.ratio) : "n/a",
      m ? fmt(m.ratio) : "-",
      b && m ? fmt(m.vsBaseline) : "n/a",
      `${b ? round(b.cpuUs) : "n/a"} / ${round(m?.cpuUs)} / ${round(f?.cpuUs)}`,
      `${b ? fmt(b.cpuRatio) : "n/a"} / ${m ? fmt(m.cpuRatio) : "-"}`,
      pair(b?.p50, m?.p50),
      pair(b?.p99, m?.p99),
      `${r.baseline?.calls ?? "n/a"} / ${r.calls ?? "-"}`,
      r.results ? String(non2xx) : "-",
      verdict,
    ];
  });
  const out = [`| ${header.join(" | ")} |`, `|${header.map((_h, i) => (i === 0 ? "---" : "---:")).join("|")}|`];
  for (const l of lines) out.push(`| ${l.join(" | ")} |`);
  return out.join("\n");
}

// ---------------------------------------------------------------- profile

const PROFILE_SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 10);
const PROFILE_INTERVAL_US = Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 100);
const TOP = Number(process.env.BENCH_PROFILE_TOP ?? 25);

/**
 * `--profile <row>...`: each row's endpoint, then its floor, under the same load as a timed round
 * (after a warm-up), with V8's sampling profiler on that Worker's isolate (bench/profile.mjs).
 * Prints self time per request by kind of work, by module and by function (source-mapped), the
 * difference from the floor, and writes the .cpuprofile files (open them in Chrome DevTools,
 * Performance panel) to bench/.data/.
 */
async function profileRows(mf, url, rows, bundle, counter, db) {
  const { profile, summarise, loadSourceMap, markdown } = await import("./profile.mjs");
  const bundles = { [bundle.main]: loadSourceMap(path.join(bundle.outdir, bundle.main), ROOT) };
  const out = path.join(BENCH, ".data");
  await mkdir(out, { recursive: true });
  for (const row of rows.filter((r) => !r.verdict)) {
    const summaries = {};
    for (const [worker, target] of [
      ["api", { request: (n) => row.endpoint.request(n) }],
      ["floor", { request: (n) => floorRequest(row.endpoint, n) }],
    ]) {
      await load(url, target, counter, WARMUP_SECONDS);
      await row.endpoint.reset?.(db);
      const { cpuprofile, result } = await profile(
        mf,
        worker,
        () => load(url, target, counter, PROFILE_SECONDS),
        PROFILE_INTERVAL_US,
      );
      await row.endpoint.reset?.(db);
      if (result.non2xx + result.errors > 0) throw new Error(`${row.key} ${worker}: ${failures(result)}`);
      const file = path.join(out, `${row.key}-${worker}.cpuprofile`);
      await writeFile(file, JSON.stringify(cpuprofile));
      summaries[worker] = { ...summarise(cpuprofile, { bundles, requests: result.total }), rps: result.rps, file };
    }
    const { api, floor } = summaries;
    console.log(
      `\n## ${row.label}: profile (${PROFILE_SECONDS} s under load, sampled every ${PROFILE_INTERVAL_US} µs)\n`,
    );
    console.log(
      `endpoint: ${Math.round(api.rps)} req/s, ${api.requests} requests, JS and native time in its isolate ${api.perRequestUs.toFixed(0)} µs/request` +
        ` (wall ${(1e6 / api.rps).toFixed(0)} µs/request at this rate)`,
    );
    console.log(
      `floor: ${Math.round(floor.rps)} req/s, ${floor.requests} requests, ${floor.perRequestUs.toFixed(0)} µs/request in its isolate` +
        ` (wall ${(1e6 / floor.rps).toFixed(0)} µs/request)`,
    );
    console.log(
      `difference: ${(api.perRequestUs - floor.perRequestUs).toFixed(0)} µs/request in the isolate, ${(1e6 / api.rps - 1e6 / floor.rps).toFixed(0)} µs/request of wall time`,
    );
    console.log(`profiles: ${api.file}, ${floor.file}\n`);
    console.log(markdown("endpoint: kind of work", api.byKind, TOP));
    console.log("");
    console.log(markdown("floor: kind of work", floor.byKind, TOP));
    console.log("");
    console.log(markdown("endpoint: under which function of src/ (innermost on the stack)", api.byCaller, TOP));
    console.log("");
    console.log(markdown("endpoint: module", api.byModule, TOP));
    console.log("");
    console.log(markdown("endpoint: function (self time)", api.byFunction, TOP));
  }
}

// ---------------------------------------------------------------- main

/** Armed for the set-up, re-armed once the timing's length is known (rows, rounds and seconds). */
let watchdogTimer;
function watchdog(ms, what) {
  clearTimeout(watchdogTimer);
  watchdogTimer = setTimeout(() => {
    console.error(`bench: ${what} still running after ${Math.round(ms / 1000)} s, giving up`);
    process.exit(2);
  }, ms);
  watchdogTimer.unref();
}

/** A route the build does not have: 404 from the router (not a record's), or 405. */
const noRoute = (count) =>
  count.statuses.some((s) => s === 405) || (count.statuses.some((s) => s === 404) && /No route/i.test(count.detail));

async function main() {
  const started = Date.now();
  watchdog(SETUP_WATCHDOG_MS, "the set-up");
  const args = process.argv.slice(2);
  const profiling = args.includes("--profile");
  const only = args.filter((a) => a !== "--profile");
  if (profiling && !only.length) throw new Error("--profile needs the rows to profile, e.g. --profile documents-list");
  const baselineRef = profiling ? undefined : process.env.BENCH_BASELINE || undefined;
  const m = machine();
  console.log(`machine: ${m.os}; ${m.cpus}; ${m.memory}; node ${m.node}; load average ${os.loadavg()[0].toFixed(2)}`);

  const tmp = await mkdtemp(path.join(os.tmpdir(), "school-api-bench-"));
  onExit.push(() => rmSync(tmp, { recursive: true, force: true }));

  const builds = [{ name: "now", build: await build(path.join(tmp, "dist")) }];
  let baseline;
  if (baselineRef) {
    const b = await buildBaseline(baselineRef, tmp);
    baseline = { ...b, ref: baselineRef };
    console.log(
      `baseline: ${baselineRef} = ${b.sha.slice(0, 12)} (${b.sameLock ? "same package-lock.json: node_modules linked" : "npm ci"})`,
    );
    builds.unshift({ name: baselineRef, build: b });
  }
  const bundle = builds.at(-1).build;
  const { measureStartup, BUDGETS, buildWorker, REFERENCE_ENTRY } = await bundleTools();
  const ms = (f) => (f ? `median ${fmt(f.median, 1)} ms (min ${fmt(f.min, 1)})` : "-");
  const summaryLines = [];
  const yardstick = profiling ? undefined : await buildWorker(path.join(tmp, "yardstick"), REFERENCE_ENTRY);
  for (const { name, build: b } of profiling ? [] : builds) {
    const startup = await measureStartup(b, 15, yardstick);
    const line =
      `${name}: bundle ${b.main} ${kib(b.raw)} raw, ${kib(b.gzip)} gzip; start-up (fresh isolates, budget ${BUDGETS.startupMs} ms ` +
      `normalised evaluation): ${startup.normalisedEvaluation ? `evaluation, normalised CPU ${ms(startup.normalisedEvaluation)}; ` : ""}` +
      `${startup.normalised ? `with the first request, normalised CPU ${ms(startup.normalised)}; ` : ""}` +
      `${startup.cpu ? `CPU ${ms(startup.cpu)} = evaluation ${ms(startup.evaluation)} + first request ${ms(startup.firstRequest)}; ` : ""}` +
      `wall ${ms(startup.wall)}`;
    console.log(line);
    summaryLines.push(line);
  }

  const logs = [];
  const { mf, url, setPlans } = await startMiniflare(bundle, baseline, logs, profiling);
  let db = await mf.getD1Database("DB", "api");
  const migrations = await migrate(db);
  await seedDemo(db);
  const docs = await seedDocuments(db);
  console.log(
    `data: ${migrations.length} migrations, seed/demo.sql, documents per school: ${docs.map((d) => `${d.school_id}: ${d.n}`).join(", ")}`,
  );
  const documentId = (
    await db
      .prepare("SELECT id FROM document WHERE school_id = ? ORDER BY id LIMIT 1 OFFSET ?")
      .bind(NORTH, DOCUMENTS_PER_SCHOOL / 2)
      .first()
  ).id;
  // Before the bench's own students: the tasks go to the demo school's.
  const tasks = await seedTasks(db);
  console.log(
    `tasks: ${BENCH_TASKS} tasks of ${tasks.recipients} recipients, the demo parent's copies: ${tasks.parentCopies}; ${BENCH_SLOTS} bookable slots`,
  );
  const students = await seedStudents(db);
  const transport = await seedRoutes(db);
  console.log(`transport: ${BENCH_ROUTES} routes, ${transport.riders} riders on ${LIST_DATE}`);
  const afternoon = await seedAfternoon(db);
  const bench = await seedEvents(db);
  console.log(`events: ${bench.events} events, ${bench.articles} lost articles in the north school`);
  console.log(
    `afternoon: ${afternoon.students} active students, ${afternoon.permissions} exit permissions on ${LIST_DATE}`,
  );
  const notifications = await seedNotifications(db);
  console.log(
    `notifications: ${notifications.guardians} guardians, ${notifications.members} members in the north school, ${INBOX} in the demo parent's inbox`,
  );
  const callers = callersOf();
  await callers.renew();
  const runId = Date.now().toString(36);
  const all = endpoints({ callers, documentId, runId, students, transport, notifications, tasks });
  const unknown = only.filter((k) => !all.some((e) => e.key === k));
  if (unknown.length)
    throw new Error(`unknown endpoint(s) ${unknown.join(", ")}; known: ${all.map((e) => e.key).join(", ")}`);
  const selected = only.length ? all.filter((e) => only.includes(e.key)) : all.filter((e) => !e.optional);

  console.log(
    `load: autocannon, ${CONNECTIONS} connections, no pipelining, ${WARMUP_SECONDS} s warm-up + ${ROUNDS} × ${ROUND_SECONDS} s rounds (medians), ` +
      `each row's ${baseline ? "baseline, endpoint and floor" : "endpoint and floor"} in turn; server ${url}`,
  );
  const counter = { next: 0 };
  const rows = selected.map((endpoint) => ({ endpoint, label: endpoint.label, key: endpoint.key, notes: [] }));

  // Counting pass first: it also proves every endpoint answers 2xx before any timing, and
  // captures the statements each row's floor replays.
  const plans = {};
  for (const row of rows) {
    const count = await countD1(mf, "api-counted", row.endpoint, counter);
    row.calls = count.calls;
    if (noRoute(count)) {
      row.verdict = "FAIL: route not mounted";
    } else if (count.statuses.some((s) => s < 200 || s >= 300)) {
      row.verdict = `FAIL: counting pass got ${count.statuses.join(", ")}: ${count.detail}`;
    } else {
      plans[row.key] = count.plan;
    }
    const steps = count.plan.trace.map((s) => (s.kind === "batch" ? `batch of ${s.statements.length}` : s.kind));
    console.log(
      `  ${row.label}: ${count.calls} D1 call(s)/request (${steps.join(", ") || "none"}), status ${count.statuses.join(", ")}` +
        (count.varies ? "; NOTE: its SQL differs from one request to the next, the floor replays the last" : ""),
    );
    await row.endpoint.reset?.(db);
    if (!baseline) continue;
    const old = await countD1(mf, "baseline-counted", row.endpoint, counter);
    await row.endpoint.reset?.(db);
    row.baseline = { calls: old.calls };
    // An older build may word its 404 otherwise: any 404 or 405 there is a route it lacks.
    if (old.statuses.some((s) => s === 404 || s === 405)) {
      row.baseline = { na: true };
      row.notes.push(`${baseline.ref}: n/a (no such route: ${old.statuses.join(", ")})`);
    } else if (old.statuses.some((s) => s < 200 || s >= 300)) {
      row.baseline.na = true;
      row.notes.push(`${baseline.ref}: FAIL, counting pass got ${old.statuses.join(", ")}: ${old.detail}`);
    } else {
      if (old.calls !== count.calls)
        row.notes.push(`D1 calls differ (${baseline.ref} ${old.calls}, now ${count.calls})`);
      if (shape(old.plan.trace) !== shape(count.plan.trace)) row.notes.push(`${baseline.ref} ran other SQL`);
    }
    console.log(
      `    ${baseline.ref}: ${row.baseline.na ? "not timed" : `${old.calls} D1 call(s)/request`}, status ${old.statuses.join(", ")}`,
    );
  }
  if (process.env.BENCH_PLANS_OUT) await writeFile(process.env.BENCH_PLANS_OUT, `${JSON.stringify(plans, null, 2)}\n`);
  await setPlans(plans);
  db = await mf.getD1Database("DB", "api"); // stubs die with the restart
  for (const row of rows.filter((r) => !r.verdict)) {
    const problem = await checkFloor(mf, row.endpoint, plans[row.key], counter);
    if (problem) row.verdict = `FAIL: ${problem}`;
    await row.endpoint.reset?.(db);
  }

  if (profiling) {
    await profileRows(mf, url, rows, bundle, counter, db);
    return;
  }

  // Rounds interleave the rows and, within a row, the baseline, the endpoint and its floor
  // (warm-up, then round 1 of each, round 2 of each, ...; the order within a row rotates from one
  // round to the next) so that other load on the machine spreads over every row, build and floor
  // instead of landing on one. A row that already failed is not timed: a fast 401 is not a benchmark.
  const timed = rows.filter((r) => !r.verdict);
  const variants = (row) => [
    ...(baseline && !row.baseline?.na
      ? [
          {
            name: "baseline",
            request: (n) => {
              const r = row.endpoint.request(n);
              return { ...r, headers: { ...r.headers, host: BASELINE_HOST } };
            },
          },
        ]
      : []),
    { name: "api", request: (n) => row.endpoint.request(n) },
    { name: "floor", request: (n) => floorRequest(row.endpoint, n) },
  ];
  const plannedSeconds = timed.reduce((a, r) => a + variants(r).length * (WARMUP_SECONDS + ROUNDS * ROUND_SECONDS), 0);
  watchdog((plannedSeconds * 1.5 + 120) * 1000, "the timing");
  console.log(`timing ${timed.length} rows: about ${Math.round(plannedSeconds / 60)} minutes`);
  const runs = new Map(timed.map((r) => [r, Object.fromEntries(variants(r).map((v) => [v.name, { rounds: [] }]))]));
  const timedRun = async (row, variant, seconds) => {
    await callers.renew();
    const result = await load(url, variant, counter, seconds);
    await row.endpoint.reset?.(db);
    return result;
  };
  for (const row of timed) {
    for (const v of variants(row)) runs.get(row)[v.name].warm = await timedRun(row, v, WARMUP_SECONDS);
  }
  for (let i = 0; i < ROUNDS; i++) {
    for (const row of timed) {
      const vs = variants(row);
      const order = [...vs.slice(i % vs.length), ...vs.slice(0, i % vs.length)];
      for (const v of order) runs.get(row)[v.name].rounds.push(await timedRun(row, v, ROUND_SECONDS));
    }
    const figures = (r) =>
      Object.values(runs.get(r))
        .map((v) => Math.round(v.rounds[i].rps))
        .join("/");
    console.log(
      `  round ${i + 1}/${ROUNDS}: ${timed.map(figures).join(", ")} req/s (${baseline ? `${baseline.ref}/` : ""}endpoint/floor)`,
    );
  }
  for (const row of timed) {
    const r = runs.get(row);
    row.results = { floor: summarise(r.floor), api: summarise(r.api, r.floor) };
    if (r.baseline) {
      row.results.baseline = summarise(r.baseline, r.floor);
      row.results.api.vsBaseline = median(r.api.rounds.map((x, i) => x.rps / r.baseline.rounds[i].rps));
      const oldFailed = failures(row.results.baseline);
      if (oldFailed) {
        row.notes.push(`${baseline.ref}: FAIL, ${oldFailed}`);
        delete row.results.baseline;
      }
    }
    const failed = failures(row.results.api);
    const floorFailed = failures(row.results.floor);
    if (failed) row.verdict = `FAIL: ${failed}`;
    else if (floorFailed) row.verdict = `FAIL: the floor got ${floorFailed}`;
    row.verdict ??= "ok";
  }
  const load1 = os.loadavg()[0];

  console.log("");
  console.log(table(rows, baseline));
  console.log("");
  console.log(`machine: ${m.os}; ${m.cpus}; ${m.memory}; node ${m.node}`);
  if (baseline) console.log(`baseline: ${baseline.ref} = ${baseline.sha}`);
  for (const line of summaryLines) console.log(line);
  if (!only.length || only.includes("notification-send")) {
    const f = await measureFanOut(mf, db, await adminToken());
    console.log(
      `fan-out: ${f.copies} copies of one notification (${f.recipients} recipients) in ${f.messages} messages, ` +
        `${fmt(f.consumerMs, 0)} ms in the consumer: ${Math.round((f.copies / f.consumerMs) * 1000)} copies/s`,
    );
  }
  if (!only.length || only.includes("dismissal-board")) {
    await callers.renew();
    const live = await measureLiveFanOut(url, callers.auth);
    console.log(
      live.skipped
        ? `live board: not measured (${live.skipped})`
        : `live board: an event (a reunification's start or end, the path of a release) reaching ${live.subscribers} ` +
            `WebSocket subscribers, ${live.events} events: p50 ${fmt(live.p50, 1)} ms, p99 ${fmt(live.p99, 1)} ms from the request ` +
            `(the verb itself answers in ${fmt(live.verb, 1)} ms, median: it tells every guardian)`,
    );
    const offline = await measureOfflineBatch(url, callers.auth, db, runId);
    console.log(
      `offline releases: a gate's batch of ${offline.items} sent ${offline.sends} times -> ${offline.rows} rows ` +
        `(${offline.outcomes.map((o) => JSON.stringify(o)).join(", ")}; ${offline.times.map((t) => fmt(t, 0)).join(", ")} ms)`,
    );
    if (offline.rows !== offline.items) {
      console.error(`BENCH FAILED: offline releases recorded ${offline.rows} rows, not ${offline.items}`);
      process.exitCode = 1;
    }
  }
  if (!only.length || only.includes("route-run-boarding")) {
    await callers.renew();
    const bus = await measureBusRun(mf, url, callers.auth, callers.asParent, db, transport);
    console.log(
      `bus run: first boardings (${bus.boardings}, one at a time): p50 ${fmt(bus.boardP50, 1)} ms, p99 ${fmt(bus.boardP99, 1)} ms, ` +
        `D1 calls ${bus.boardCalls.join("/")} (a repeat: ${bus.repeatCalls})`,
    );
    console.log(
      `bus run: positions of ${bus.buses} buses, each every 5 s after its answer, ${bus.positions} in ${fmt(bus.positionSeconds, 1)} s: ` +
        `p50 ${fmt(bus.positionP50, 1)} ms, p99 ${fmt(bus.positionP99, 1)} ms, statuses ${JSON.stringify(bus.statuses)}, late (over 5 s) ${bus.late}`,
    );
    console.log(
      `bus run: the demo parent's live view (${bus.rides} rides under way): p50 ${fmt(bus.liveP50, 1)} ms, ` +
        `p99 ${fmt(bus.liveP99, 1)} ms, D1 calls ${bus.liveCalls}`,
    );
    if (Object.keys(bus.statuses).some((s) => s !== "201")) {
      console.error("BENCH FAILED: a bus's position was refused");
      process.exitCode = 1;
    }
  }
  if (!only.length || only.includes("route-run-boarding")) {
    const fan = await measureWebhookFanOut(bundle);
    console.log(
      `webhook fan-out: one event (student.created) to ${fan.endpoints} endpoints through the queue: ${fan.arrived} arrived, ` +
        `${fan.signed} verified by standardwebhooks; the request answered in ${fmt(fan.answered, 1)} ms, the first ` +
        `delivery at ${fmt(fan.first, 0)} ms, all ${fan.arrived} at ${fmt(fan.all, 0)} ms`,
    );
    if (fan.arrived !== fan.endpoints || fan.signed !== fan.endpoints) {
      console.error("BENCH FAILED: the fan-out did not reach every endpoint signed");
      process.exitCode = 1;
    }
  }
  console.log(`load average (1 min) at the end: ${load1.toFixed(2)} on ${os.cpus().length} CPUs`);
  console.log(`total time: ${((Date.now() - started) / 1000).toFixed(0)} s`);

  // The exit code judges the current build and its floors; a baseline's failures are reported only.
  const failed = rows.filter((r) => r.verdict !== "ok");
  if (failed.length) {
    console.error(`\nBENCH FAILED: ${failed.map((r) => `${r.label}: ${r.verdict}`).join("\n  ")}`);
    if (logs.length) console.error(`last Worker log lines:\n${logs.join("\n")}`);
    process.exitCode = 1;
  }
}

try {
  await main();
} catch (err) {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exitCode = 1;
} finally {
  await running?.dispose().catch(() => {});
  process.exit();
}
