import { z } from "@hono/zod-openapi";
import { m } from "../../../src/lib/message";
import { defineResource, RecordBase, timestamps } from "../../../src/lib/resource";
import { text } from "../../../src/lib/text";
import { Notes, notes } from "../schema/note";
import { permissions } from "./permissions";

const Title = text({ max: 100 }).openapi({
  example: "Bus 3 is late on Fridays",
  description: "What the note is about",
});
const Body = text({ max: 2000 })
  .nullable()
  .openapi({ example: "Call the driver before 3 pm", description: "The note itself, if any" });

const note = defineResource({
  name: "note",
  plural: "notes",
  label: m`Note`,
  path: "/api/v1/note",
  tag: "Schools",
  scope: "school",
  data: Notes,
  record: RecordBase.extend({ title: Title, body: Body }),
  toRecord: (_ctx, row) => ({ ...timestamps(row), title: row.title, body: row.body }),
});

export const listNotes = note.list({
  access: permissions.read,
  sort: { title: notes.title, createdAt: notes.createdAt },
});
export const getNote = note.get({ access: permissions.read });
export const createNote = note.create({
  access: permissions.write,
  input: z.object({ title: Title, body: Body.optional() }),
});
export const updateNote = note.update({
  access: permissions.write,
  input: z.object({ title: Title.optional(), body: Body.optional() }),
});
export const deleteNote = note.delete({ access: permissions.write });
