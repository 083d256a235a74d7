import { asSuperAdmin, type Fixtures, readJson } from "../../../test/fixture-kit";
import { LEVELS } from "../../lib/levels";

/**
 * One schedule per (school, level, weekday): a record takes a weekend slot (the demo data fills
 * weekdays 1-5) that its school has free, trying the next slot after a 409.
 */
const SLOTS = LEVELS.flatMap((level) => [6, 7].map((weekday) => ({ level, weekday })));
let next = 0;

export const fixtures: Fixtures = {
  "/api/v1/school-schedule": {
    create: async (t, school) => {
      for (let tries = 0; tries < SLOTS.length; tries++) {
        const body = { ...SLOTS[next++ % SLOTS.length], entryTime: "09:00", dismissalTime: "12:00" };
        const res = await t.request("/api/v1/school-schedule", {
          method: "POST",
          token: await asSuperAdmin(t),
          school,
          body,
        });
        if (res.status === 201) return (await readJson<{ id: number }>(res)).id;
        if (res.status !== 409)
          throw new Error(`fixture POST /api/v1/school-schedule: ${res.status} ${await res.text()}`);
      }
      throw new Error(`fixture: school ${school} has no free weekend slot left`);
    },
    bodies: { updateSchoolSchedule: { dismissalTime: "12:30" } },
  },
};
