import { defineModule } from "../../lib/module";

export default defineModule({
  name: "auth",
  paths: ["/api/v1/auth"],
  load: async () => ({ operations: (await import("./routes")).operations }),
  jobs: [
    {
      cron: "*/5 * * * *",
      name: "purge-expired-auth",
      run: async (deps) => {
        await (await import("./service")).purgeExpired(deps);
        return "expired codes, refresh tokens, rate-limit windows and idempotency keys removed";
      },
    },
  ],
});
