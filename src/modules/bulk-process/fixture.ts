import { createMessageBatch } from "cloudflare:test";
import { createVia, type Fixtures, uniq } from "../../../test/fixture-kit";
import type { TestApp } from "../../../test/helpers";
import { handleQueue } from "../../jobs/queue";

export const fixtures: Fixtures = {
  "/api/v1/bulk-process": {
    // PUT only queues a failed process again, so the fixture runs the bulk consumer once: the
    // spreadsheet was never uploaded, so the process ends failed.
    create: async (t, school) => {
      const documentId = await createVia(t, "/api/v1/documents", school, {
        name: "Import",
        slug: `${school}/documents/${uniq("import")}.xlsx`,
      });
      const id = await createVia(t, "/api/v1/bulk-process", school, { entity: "students", documentId });
      const message = {
        id: uniq("fixture-bulk"),
        timestamp: new Date(),
        attempts: 1,
        body: { bulkProcessId: id, schoolId: school },
      };
      await handleQueue(t.deps, createMessageBatch("school-bulk", [message]));
      return id;
    },
    bodies: { updateBulkProcess: { status: "queued" } },
    params: { entity: async () => "teachers" },
  },
  // The upload operations start a bulk process for a document of the school.
  "/api/v1/teacher/upload-file": {
    create: (t, school) => createVia(t, "/api/v1/documents", school, { name: "Import", slug: upload(school) }),
    bodies: { uploadTeachersFile: async (t: TestApp, school: number) => ({ documentId: await document(t, school) }) },
  },
  "/api/v1/administrative-user/upload-file": {
    create: (t, school) => createVia(t, "/api/v1/documents", school, { name: "Import", slug: upload(school) }),
    bodies: {
      uploadAdministrativeUsersFile: async (t: TestApp, school: number) => ({ documentId: await document(t, school) }),
    },
  },
  "/api/v1/family/upload-file": {
    create: (t, school) => createVia(t, "/api/v1/documents", school, { name: "Import", slug: upload(school) }),
    bodies: { uploadFamiliesFile: async (t: TestApp, school: number) => ({ documentId: await document(t, school) }) },
  },
  "/api/v1/group/upload-file": {
    create: (t, school) => createVia(t, "/api/v1/documents", school, { name: "Import", slug: upload(school) }),
    bodies: { uploadGroupsFile: async (t: TestApp, school: number) => ({ documentId: await document(t, school) }) },
  },
};

const upload = (school: number) => `${school}/documents/${uniq("upload")}.xlsx`;
const document = (t: TestApp, school: number) =>
  createVia(t, "/api/v1/documents", school, { name: "Import", slug: upload(school) });
