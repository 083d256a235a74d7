/** Push-messaging device tokens. */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { dataTable } from "../table";
import { record, users } from "./core";

/** Push-messaging tokens of a user's devices. A token identifies one device: unique overall. */
export const deviceTokens = sqliteTable(
  "device_token",
  {
    ...record,
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    token: text("token").notNull(),
    platform: text("platform", { enum: ["ios", "android", "web"] }).notNull(),
  },
  (t) => [uniqueIndex("device_token_uq").on(t.token), index("device_token_user_idx").on(t.userId)],
);

export const DeviceTokens = dataTable(deviceTokens, { entity: "device-token", secret: ["token"] });
