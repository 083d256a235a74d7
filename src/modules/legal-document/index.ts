import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "legal-document",
  paths: ["/api/v1/legal-document"],
  permissions,
  load: async () => {
    const [r, routes] = await Promise.all([import("./resource"), import("./routes")]);
    return {
      operations: [
        r.listLegalDocuments,
        // Before `/{id}`: Hono tries routes in this order, and `/{id}` would refuse "last" as an id (400).
        routes.getLastLegalDocument,
        r.getLegalDocument,
        r.createLegalDocument,
        routes.updateLegalDocument,
        routes.deleteLegalDocument,
        r.publishLegalDocument,
        routes.acceptLegalDocument,
      ],
    };
  },
});
