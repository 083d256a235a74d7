/** The development outbox. */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt } from "./core";

/** Messages the `log` SMS provider "sent": the development outbox. */
export const devOutbox = sqliteTable(
  "dev_outbox",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    to: text("to").notNull(),
    body: text("body").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("dev_outbox_to_idx").on(t.to, t.id)],
);
