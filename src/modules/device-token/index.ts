import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "device-token",
  paths: ["/api/v1/device-token"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return {
      operations: [r.listDeviceTokens, r.getDeviceToken, r.createDeviceToken, r.updateDeviceToken, r.deleteDeviceToken],
    };
  },
});
