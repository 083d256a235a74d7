import { asSuperAdmin, createVia, type Fixtures, uniq } from "../../../test/fixture-kit";
import type { TestApp } from "../../../test/helpers";

/** A draft legal document (platform data: `school` only picks the super-admin's X-School-Id). */
const draft = (t: TestApp, school: number) =>
  createVia(t, "/api/v1/legal-document", school, { kind: "terms", title: uniq("Terms"), body: "# Terms\n\nFixture." });

export const fixtures: Fixtures = {
  // Drafts: what PUT, DELETE and publish change.
  "/api/v1/legal-document": {
    create: draft,
    bodies: { updateLegalDocument: { title: "Updated by the conformance suite" } },
  },
  // Only a published version can be accepted: the accept operation gets its own fixture.
  "/api/v1/legal-document/{id}/accept": {
    create: async (t, school) => {
      const id = await draft(t, school);
      const res = await t.request(`/api/v1/legal-document/${id}/publish`, {
        method: "PATCH",
        token: await asSuperAdmin(t),
        school,
      });
      if (res.status !== 200) throw new Error(`fixture publish: ${res.status} ${await res.text()}`);
      return id;
    },
  },
};
