import { createVia, type Fixtures, uniq } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
  "/api/v1/documents": {
    create: (t, school) =>
      createVia(t, "/api/v1/documents", school, { name: "Fixture", slug: `${school}/documents/${uniq("doc")}.pdf` }),
    bodies: {
      updateDocument: { name: "Renamed by the conformance suite" },
      createDocumentSignedUrl: {
        contentType: "application/pdf",
        slug: `1/documents/${uniq("signed")}.pdf`,
        name: "Signed",
      },
    },
  },
};
