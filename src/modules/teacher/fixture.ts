import { createVia, type Fixtures, fixturePhone } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
  "/api/v1/teacher": {
    create: (t, school) =>
      createVia(t, "/api/v1/teacher", school, { phone: fixturePhone(), firstName: "Tina", subjects: ["Math"] }),
    bodies: {
      createTeacher: () => Promise.resolve({ phone: fixturePhone(), firstName: "Tina", subjects: ["Math"] }),
      updateTeacher: { subjects: ["Renamed by the conformance suite"] },
    },
  },
};
