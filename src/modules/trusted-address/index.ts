/**
 * Trusted addresses: where the bus may drop a student off; the school approves or rejects. Its
 * permissions are the trusted-person module's (trusted.*).
 */
import { defineModule } from "../../lib/module";

export default defineModule({
  name: "trusted-address",
  paths: ["/api/v1/trusted-address"],
  load: async () => {
    const { operations } = await import("./resource");
    return { operations };
  },
});
