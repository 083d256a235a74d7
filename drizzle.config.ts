import { defineConfig } from "drizzle-kit";

// Every table: the data layer (src/db/schema/), one file per functional area.
export default defineConfig({
  dialect: "sqlite",
  schema: ["./src/db/schema/*.ts"],
  out: "./migrations",
});
