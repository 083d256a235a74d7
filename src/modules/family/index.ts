/** Families: a family number per school, its parents and students, and the school's parent limit. */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "family",
  paths: ["/api/v1/family"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return {
      // Literal sub-paths before `{id}`: `members`, `exists` and `validate` are not ids.
      operations: [
        r.familyMembers,
        r.familyExists,
        r.validateFamilies,
        r.listFamilies,
        r.createFamilyOperation,
        r.getFamily,
        r.updateFamilyOperation,
        r.deleteFamily,
        r.familyParentLimit,
      ],
    };
  },
});
