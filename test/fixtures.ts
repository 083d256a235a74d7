/**
 * How the route-conformance suite (test/conformance.test.ts) makes a real record of each resource.
 * Keyed by the collection path; an operation uses the fixture whose path is the longest prefix of
 * its own. A route with an `{id}` whose resource has no fixture fails the suite, so every new
 * resource adds one here.
 */
import { createMessageBatch } from "cloudflare:test";
import { handleQueue } from "../src/jobs/queue";
import type { TestApp } from "./helpers";

export interface Fixture {
  /** Creates a record in `school` (through the API, as a caller allowed to) and returns its id. */
  create(t: TestApp, school: number): Promise<number>;
  /** Valid request bodies by operationId, for operations that take one (updates, actions). */
  bodies?: Record<string, unknown>;
}

/** A super-admin token acting in `school`: the simplest caller that may create anything. */
export async function asSuperAdmin(t: TestApp) {
  return t.token(1, {}, true);
}

/** POSTs `body` to `path` in `school` and returns the created id (fails loudly otherwise). */
export async function createVia(t: TestApp, path: string, school: number, body: unknown, token?: string) {
  const res = await t.request(path, { method: "POST", token: token ?? (await asSuperAdmin(t)), school, body });
  if (res.status !== 201) throw new Error(`fixture POST ${path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: number }).id;
}

let unique = 0;
/** A value unique within a test file (names, slugs, tokens). */
export const uniq = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++unique}`;

export const FIXTURES: Record<string, Fixture> = {
  "/api/v1/permission": {
    create: (t, school) =>
      createVia(t, "/api/v1/permission", school, { name: `custom.p${++unique}${Date.now().toString(36)}` }),
    bodies: { updatePermission: { description: "Updated by the conformance suite" } },
  },
  "/api/v1/school-configuration": {
    create: (t, school) =>
      createVia(t, "/api/v1/school-configuration", school, {
        name: uniq("year"),
        startDate: "2026-08-24",
        endDate: "2027-06-30",
      }),
    bodies: { updateSchoolConfiguration: { name: "Renamed by the conformance suite", maxParentsPerFamily: 3 } },
  },
  "/api/v1/school-holiday-cycle": {
    // Its own school configuration, so the fixture needs no seeded row.
    create: async (t, school) =>
      createVia(t, "/api/v1/school-holiday-cycle", school, {
        startHolidays: "2026-12-19T00:00:00-06:00",
        endHolidays: "2027-01-07T00:00:00-06:00",
        schoolConfigurationId: await FIXTURES["/api/v1/school-configuration"]?.create(t, school),
      }),
    bodies: { updateSchoolHolidayCycle: { endHolidays: "2027-01-08T00:00:00-06:00" } },
  },
  "/api/v1/schedule-configuration": {
    // One per school: reuse the school's configuration when it has one (GET lists 0 or 1).
    create: async (t, school) => {
      const token = await asSuperAdmin(t);
      const res = await t.request("/api/v1/schedule-configuration", { token, school });
      if (res.status !== 200) throw new Error(`fixture GET schedule-configuration: ${res.status} ${await res.text()}`);
      const existing = ((await res.json()) as { data: { id: number }[] }).data[0];
      return (
        existing?.id ??
        createVia(t, "/api/v1/schedule-configuration", school, { permissionTimeLimit: 24, permissionWeeksInAdvance: 2 })
      );
    },
    bodies: { updateScheduleConfiguration: { permissionTimeLimit: 48 } },
  },
  "/api/v1/documents": {
    create: (t, school) =>
      createVia(t, "/api/v1/documents", school, { name: "Fixture", slug: `${school}/documents/${uniq("doc")}.pdf` }),
    bodies: { updateDocument: { name: "Renamed by the conformance suite" } },
  },
  "/api/v1/device-token": {
    // A token belongs to its user and only they may change it: registered by a member of `school`
    // (the north admin in school 1, the south admin in school 2), not by the super-admin.
    create: async (t, school) => {
      const userId = school === 2 ? 5 : 2;
      const token = await t.token(userId, { [school]: "all" });
      return createVia(t, "/api/v1/device-token", school, { token: uniq("fcm"), platform: "android" }, token);
    },
    bodies: { updateDeviceToken: { platform: "ios" } },
  },
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
  },
};
