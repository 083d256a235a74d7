import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { unstable_readConfig } from "wrangler";
import SlowFirst from "./test/node/slow-first";

// After everything else, two files at a time (the longest, the docs page, beside the others): the
// bundle's budgets and start-up timing (timed against a yardstick timed beside it, so load inflates
// both alike) and the Chromium tests (each starts wrangler dev and a browser; beside the workers
// files they timed out on this 2-core machine, and the bulk queue's end-to-end test missed its
// message: docs/architecture.md "The suite's time").
const BUILD = [
  "test/node/bundle.test.ts",
  "test/node/docs-page.test.ts",
  "test/node/cors-browser.test.ts",
  "test/node/board-page.test.ts",
  "test/node/peak.test.ts",
];

// wrangler's own lines ("Using secrets defined in .dev.vars", once per test file) are for `wrangler
// dev`; the tests pin their bindings below. Its warnings and errors still show.
process.env.WRANGLER_LOG ??= "warn";

export default defineConfig(async () => {
  // Workers Static Assets (public/, not in git) must exist before wrangler.toml is read: on a fresh
  // clone `npx vitest run test/x.test.ts` comes before any `wrangler dev` or build has filled it.
  execFileSync(process.execPath, [new URL("./scripts/docs-assets.mjs", import.meta.url).pathname], {
    stdio: "inherit",
  });
  const migrations = await readD1Migrations(new URL("./migrations", import.meta.url).pathname);
  const seed = readFileSync(new URL("./seed/demo.sql", import.meta.url).pathname, "utf8");
  // The README's import walk-through file (test/readme-import.test.ts imports it).
  const sampleTeachers = readFileSync(new URL("./docs/samples/teachers.xlsx", import.meta.url).pathname).toString(
    "base64",
  );
  // What a build defines (scripts/wrangler.ts): a fixed commit, and the real last migration, so the
  // health report's migration check runs against the migrations the tests apply.
  const build = {
    __BUILD_COMMIT__: JSON.stringify("0123456789ab"),
    __BUILD_COMMITTED_AT__: JSON.stringify("2026-11-20T10:00:00+00:00"),
    __BUILD_AT__: JSON.stringify("2026-11-21T08:00:00.000Z"),
    __LATEST_MIGRATION__: JSON.stringify(migrations.at(-1)?.name ?? ""),
  };
  // wrangler.toml's [alias] of packages (pdf-lib's dependencies trimmed, src/lib/pdf-lib/), so the
  // tests run the code the Worker bundles. zod's locale alias is left out: it replaces a relative
  // import, which only the Worker's bundler resolves that way.
  const alias = Object.fromEntries(
    Object.entries(unstable_readConfig({ config: new URL("./wrangler.toml", import.meta.url).pathname }).alias ?? {})
      .filter(([from]) => !from.startsWith("."))
      .map(([from, to]) => [from, new URL(String(to), import.meta.url).pathname]),
  );
  return {
    test: {
      // The access log's line per request is for operators; in test output it buries the failures.
      onConsoleLog: (log: string) => !log.includes('"message":"request"'),
      // Beside the usual output, a JSON report each file's timing is read from (npm run -s test:times).
      reporters: ["default", "json"],
      // Two files at a time: vitest's default on two cores is one (a core left for itself), but
      // a file waits on workerd and workerd on vitest, so two keep both cores busy.
      maxWorkers: 2,
      // A fresh clone's first run: the slowest files first (test/node/slow-first.ts).
      sequence: { sequencer: SlowFirst },
      outputFile: { json: ".vitest/report.json" },
      projects: [
        {
          // Everything that runs in workerd against real local D1, R2 and Queues.
          define: build,
          resolve: { alias },
          plugins: [
            cloudflareTest({
              // The development configuration `npm run dev` serves ([env.dev]: its vars and bindings).
              wrangler: { configPath: "./wrangler.toml", environment: "dev" },
              miniflare: {
                bindings: {
                  // Pinned here as well, so a developer's own .dev.vars (which wrangler also reads)
                  // cannot change what the tests run with.
                  ENVIRONMENT: "development",
                  SMS_PROVIDER: "log",
                  S3_ENDPOINT: "http://localhost:8787/dev/s3",
                  CORS_ORIGINS: "",
                  LIBSQL_URL: "",
                  AUTH_SECRET: "test-secret-0123456789abcdef0123456789abcdef",
                  S3_ACCESS_KEY_ID: "S3RVER",
                  S3_SECRET_ACCESS_KEY: "S3RVER",
                  TEST_MIGRATIONS: migrations,
                  TEST_SEED: seed,
                  // An instant (2027-03-15T16:00:00Z): every file's demo seeded for its day (test/setup.ts).
                  DEMO_TODAY: process.env.DEMO_TODAY ?? "",
                  TEST_SAMPLE_TEACHERS: sampleTeachers,
                  // The model of the afternoon's runs and seed (test/afternoon-model.test.ts; npm run test:model).
                  MODEL_RUNS: process.env.MODEL_RUNS ?? "",
                  MODEL_SEED: process.env.MODEL_SEED ?? "",
                },
                // The bulk queue delivers at once here (wrangler.toml waits up to 5 s to fill a batch):
                // its end-to-end test (test/bulk-process.test.ts), the one sender, waits for it.
                queueConsumers: {
                  "school-bulk": {
                    maxBatchSize: 5,
                    maxBatchTimeout: 0,
                    maxRetries: 3,
                    deadLetterQueue: "school-bulk-dlq",
                  },
                },
              },
            }),
          ],
          test: {
            name: "workers",
            include: ["test/**/*.test.ts"],
            exclude: ["test/node/**"],
            setupFiles: ["./test/setup.ts"],
            // Files share a workerd process, one per worker: a new process per file cost ~5 s of
            // CPU (its Miniflare, its isolate, every module loaded again), most of the suite's
            // time. Each file still starts on storage of its own: test/setup.ts drops every table,
            // migrates and seeds again (~0.2 s), and empties the bucket.
            isolate: false,
            // A file's first test builds the app and loads its modules cold: on a loaded 2-core
            // machine that alone has taken over 5 s (vitest's default), which is not a failure.
            testTimeout: 20_000,
            hookTimeout: 30_000,
            globalSetup: ["./test/node/global-setup.ts"],
          },
        },
        {
          // The same services on libSQL, in Node.
          // A test that spawns a process (the token script, wrangler) waits on a loaded machine too.
          test: {
            name: "node",
            include: ["test/node/**/*.test.ts"],
            exclude: BUILD,
            environment: "node",
            testTimeout: 20_000,
            // A file's set-up that migrates a libSQL file or starts a server waits on a loaded machine too.
            hookTimeout: 30_000,
          },
        },
        {
          // The built Worker (bundle budgets, start-up) and the Chromium tests: after the other
          // projects, two at a time.
          test: {
            name: "build",
            include: BUILD,
            environment: "node",
            sequence: { groupOrder: 1 },
            // The Chromium tests' servers start from one migrated and seeded local D1, copied.
            globalSetup: ["./test/node/dev-global-setup.ts"],
          },
        },
      ],
    },
  };
});
