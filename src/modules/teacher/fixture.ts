import { createVia, type Fixtures } from "../../../test/fixture-kit";

let next = 0;
/** A number no one has in this test file (the demo numbers are +1555000xxxx). */
const phone = () => `+1555${5_000_000 + ++next}`;

export const fixtures: Fixtures = {
  "/api/v1/teacher": {
    create: (t, school) =>
      createVia(t, "/api/v1/teacher", school, { phone: phone(), firstName: "Tina", subjects: ["Math"] }),
    bodies: { updateTeacher: { subjects: ["Renamed by the conformance suite"] } },
  },
};
