/** Trusted people: whom a parent authorises to pick a student up; the school approves or rejects. */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "trusted-person",
  paths: ["/api/v1/trusted-person"],
  permissions,
  load: async () => {
    const { operations } = await import("./resource");
    return { operations };
  },
});
