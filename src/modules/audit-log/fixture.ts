import { and, desc, eq } from "drizzle-orm";
import { createVia, type Fixtures, uniq } from "../../../test/fixture-kit";
import { auditLog } from "../../db/schema/audit-log";

export const fixtures: Fixtures = {
  // Any audited write makes an entry: a document, created in the school.
  "/api/v1/audit-log": {
    create: async (t, school) => {
      const id = await createVia(t, "/api/v1/documents", school, {
        name: "Audited",
        slug: `${school}/documents/${uniq("a")}.pdf`,
      });
      const [row] = await t.db
        .select({ id: auditLog.id })
        .from(auditLog)
        .where(and(eq(auditLog.entity, "document"), eq(auditLog.recordId, id)))
        .orderBy(desc(auditLog.id))
        .limit(1);
      if (!row) throw new Error("no audit row for the fixture document");
      return row.id;
    },
  },
};
