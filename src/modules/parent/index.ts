/** Parents: the parent role's profiles in the current school, and their Excel export. */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "parent",
  paths: ["/api/v1/parent"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return {
      // The export before `{id}`: `/export` is not an id.
      operations: [
        r.exportParents,
        r.listParents,
        r.getParent,
        r.createParentOperation,
        r.updateParentOperation,
        r.deleteParentOperation,
      ],
    };
  },
});
