import { createVia, type Fixtures, uniq } from "../../../test/fixture-kit";

export const fixtures: Fixtures = {
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
};
