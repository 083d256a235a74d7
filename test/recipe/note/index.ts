import { defineModule } from "../../../src/lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "note",
  paths: ["/api/v1/note"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return { operations: [r.listNotes, r.createNote, r.getNote, r.updateNote, r.deleteNote] };
  },
});
