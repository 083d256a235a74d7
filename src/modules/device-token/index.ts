import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";
import { createDeviceToken, deleteDeviceToken, getDeviceToken, listDeviceTokens, updateDeviceToken } from "./resource";

export default defineModule({
  name: "device-token",
  permissions,
  operations: [listDeviceTokens, getDeviceToken, createDeviceToken, updateDeviceToken, deleteDeviceToken],
});
