/** Delegates: people a parent lets act for them in the app, between two dates. */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "delegate",
  paths: ["/api/v1/delegate"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return {
      operations: [
        r.listDelegates,
        r.getDelegate,
        r.createDelegateOperation,
        r.updateDelegateOperation,
        r.deleteDelegate,
      ],
    };
  },
});
