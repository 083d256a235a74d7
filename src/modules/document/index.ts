import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";
import { createDocument, deleteDocument, getDocument, listDocuments, updateDocument } from "./resource";
import { createDocumentSignedUrl } from "./signed-url";

export default defineModule({
  name: "document",
  permissions,
  operations: [listDocuments, getDocument, createDocument, updateDocument, deleteDocument, createDocumentSignedUrl],
});
