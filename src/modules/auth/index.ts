import { defineModule } from "../../lib/module";
import { operations } from "./routes";
import { purgeExpired } from "./service";

export default defineModule({
  name: "auth",
  operations,
  jobs: [
    {
      cron: "*/5 * * * *",
      name: "purge-expired-auth",
      run: async (deps) => {
        await purgeExpired(deps);
        return "expired codes and refresh tokens removed";
      },
    },
  ],
});
