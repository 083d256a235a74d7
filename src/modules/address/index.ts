/** Addresses of a school. */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "address",
  paths: ["/api/v1/address"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return { operations: [r.listAddresses, r.getAddress, r.createAddress, r.updateAddress, r.deleteAddress] };
  },
});
