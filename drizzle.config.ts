import { defineConfig } from "drizzle-kit";

// The spine's tables, the jobs' tables, and each module's own `schema.ts`.
export default defineConfig({
  dialect: "sqlite",
  schema: ["./src/db/core.ts", "./src/jobs/schema.ts", "./src/modules/*/schema.ts"],
  out: "./migrations",
});
