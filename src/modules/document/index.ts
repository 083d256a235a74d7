import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "document",
  paths: ["/api/v1/documents"],
  permissions,
  load: async () => {
    const [r, { createDocumentSignedUrl }] = await Promise.all([import("./resource"), import("./signed-url")]);
    return {
      operations: [
        r.listDocuments,
        r.getDocument,
        r.createDocument,
        r.updateDocument,
        r.deleteDocument,
        createDocumentSignedUrl,
      ],
    };
  },
});
