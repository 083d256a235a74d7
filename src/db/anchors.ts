/**
 * User anchors (docs/scaling.md "Shards", "Anchors"): a shard holds a kept copy of the `user` row
 * of every person its schools name, so the school-side statements that join `user` run on the
 * school's database as they always did. The platform database (`DB`, also shard 0) holds the user
 * rows themselves; there a user row is its own anchor and is written once.
 *
 * The data layer keeps them, and a module never writes them by hand:
 *
 * - `resolveUsers`: the users of some phones, the missing ones created, in the platform database
 *   (one batch, answering their rows): the first step of adding people by phone. Their ids are
 *   then values in the school's batch.
 * - `userAnchors`: the anchor upsert of those rows, for the school's batch (one statement, the rows
 *   as one JSON parameter, `INSERT ... ON CONFLICT(id) DO UPDATE`); none when the school is on the
 *   platform database or the deployment has no shards.
 * - `Batch.mirrorUsers` (src/db/batch.ts): a batch that writes `user` rows, then
 *   those rows as they stand after it copied to every other database (one statement per database,
 *   in parallel; a database without the anchor changes nothing). On a deployment without shards,
 *   nothing more than the batch.
 *
 * Copied: the whole user row (identity, status, the super-admin flag, `deleted_at`: what the
 * school-side statements read). Never copied: sign-in state (codes, refresh tokens, devices, rate
 * limits), which has its own tables in the platform database.
 */
import { type Ctx, now, type SchoolCtx } from "../lib/context";
import { fold } from "../lib/fold";
import type { Db } from "./client";
import { query } from "./query";
import { users } from "./schema/core";
import { schoolPeople } from "./schema/user";
import { databaseOf, PLATFORM } from "./shards";
import { getTableColumns, type SQL, sql } from "./sql";
import type { SetValues } from "./table";
import { type CommitMessages, columnList, commitOn, inList, type Statement, startEveryBatchWith } from "./write";

/** The user row as an anchor copies it: every column, in the table's order. */
export type UserRow = typeof users.$inferSelect;

const COLUMNS = Object.entries(getTableColumns(users));
/** The columns' SQL names, in order. */
const NAMES = COLUMNS.map(([, c]) => c.name);

/** The select list of every column of `user` (the anchor's fields). */
export const userRowFields = getTableColumns(users);

/** The rows as one JSON parameter: each an array of the columns' stored values, in order. */
function rowsJson(rows: readonly UserRow[]): string {
  return JSON.stringify(rows.map((r) => COLUMNS.map(([key, c]) => c.mapToDriverValue(Reflect.get(r, key)))));
}

/** Whether `ctx`'s school is on another database than the platform's: then it holds anchors. */
export async function holdsAnchors(ctx: SchoolCtx): Promise<boolean> {
  return (await onShard(ctx)) !== undefined;
}

/** The school's database when it is not the platform's. */
async function onShard(ctx: SchoolCtx): Promise<Db | undefined> {
  const { deps } = ctx;
  if (!deps.shards) return undefined;
  const db = await databaseOf(ctx);
  return db === (deps.platform ?? deps.db) ? undefined : db;
}

/**
 * The anchor upsert of `rows` (as the platform database holds them) for the school's batch: one
 * statement over the rows as one JSON parameter, each written with the platform's id (`ON
 * CONFLICT(id) DO UPDATE`: an anchor there already takes the platform's values). None when the
 * school's database is the platform's, or there is nothing to write. Place it before the
 * statements that name the users.
 */
export async function userAnchors(ctx: SchoolCtx, rows: readonly UserRow[]): Promise<Statement[]> {
  if (rows.length === 0 || !(await onShard(ctx))) return [];
  return [anchorUpsert(ctx.deps.db, rows)];
}

function anchorUpsert(db: Db, rows: readonly UserRow[]): Statement {
  // drizzle's INSERT ... SELECT names every column in the table's order: the JSON rows' order.
  const values = sql.raw(NAMES.map((_, i) => `j.value->>${i}`).join(", "));
  return db
    .insert(users)
    .select(sql`SELECT ${values} FROM json_each(${rowsJson(rows)}) j WHERE true`)
    .onConflictDoUpdate({ target: users.id, set: setFrom((_, name) => sql.raw(`excluded."${name}"`)) });
}

/** Every column but the id set to `value(its position, its name)`. */
function setFrom(value: (index: number, name: string) => SQL): SetValues<typeof users> {
  const set: Record<string, SQL> = {};
  COLUMNS.forEach(([key, c], i) => {
    if (key !== "id") set[key] = value(i, c.name);
  });
  return set;
}

/** The anchors of `rows` brought to their values, where a database holds them (`UPDATE ... FROM`). */
function anchorUpdate(db: Db, rows: readonly UserRow[]): Statement {
  return db
    .update(users)
    .set(setFrom((i) => sql.raw(`j.value->>${i}`)))
    .from(sql`json_each(${rowsJson(rows)}) j`)
    .where(sql`${users.id} = j.value->>0`);
}

/** A new user made by phone (`resolveUsers`): what a school sent of them. */
export interface NewUser {
  phone: string;
  firstName: string;
  lastName: string;
  email: string | null;
  /** Null: the column's default (`en`). */
  language: string | null;
}

export interface Resolved {
  /** Every user of the phones asked (deleted ones too), as the platform database holds them. */
  rows: UserRow[];
  /** The ids of the users this call created. */
  created: Set<number>;
}

/**
 * The first step of adding people by phone: in the platform database, one batch, the users of
 * `create` whose phone has no user yet are created (`taken: "skip"`: a phone registered meanwhile
 * is left alone; `"conflict"`: the unique index's 409, `messages.conflict`), then the users of
 * `phones` (and of `create`) read back with which this batch made. A failure after it (the
 * school's batch refused) leaves users with no membership: harmless, found by phone next time.
 */
export async function resolveUsers(
  ctx: Ctx,
  phones: readonly string[],
  create: readonly NewUser[] = [],
  { taken = "skip", messages }: { taken?: "skip" | "conflict"; messages?: CommitMessages } = {},
): Promise<Resolved> {
  const platform = ctx.deps.platform ?? ctx.deps.db;
  const db = ctx.deps.db;
  const all = [...new Set([...phones, ...create.map((p) => p.phone)])];
  if (all.length === 0) return { rows: [], created: new Set() };
  const read = db
    .select({ ...userRowFields, made: sql<number>`"user"."id" > ${sql.raw(LAST_USER)} - changes()` })
    .from(users)
    .where(inList(users.phone, all));
  if (create.length === 0) {
    // Nothing to create: a read (changes() is no write of this batch's: `made` is ignored).
    const rows = await commitOn(ctx, platform, [read]);
    return { rows: rows[0].map(({ made: _, ...r }) => r), created: new Set() };
  }
  const at = now(ctx);
  const json = JSON.stringify(create.map((p) => [p.phone, p.firstName, p.lastName, p.email, p.language]));
  const folded = JSON.stringify(create.map((p) => [fold(p.firstName), fold(p.lastName)]));
  const made = db.insert(users).select(
    sql`SELECT ${columnList(users, {
      createdAt: at,
      updatedAt: at,
      phone: sql`j.value->>0`,
      firstName: sql`j.value->>1`,
      lastName: sql`j.value->>2`,
      email: sql`j.value->>3`,
      language: sql`coalesce(j.value->>4, 'en')`,
      status: "invited",
      isSuperAdmin: 0,
      firstNameSearch: sql`f.value->>0`,
      lastNameSearch: sql`f.value->>1`,
    })} FROM json_each(${json}) j JOIN json_each(${folded}) f ON f.key = j.key WHERE true`,
  );
  const insert = taken === "skip" ? made.onConflictDoNothing({ target: users.phone }) : made;
  const [, rows] = await commitOn(ctx, platform, [insert, read], messages);
  const created = new Set(rows.filter((r) => r.made === 1).map((r) => r.id));
  return { rows: rows.map(({ made: _, ...r }) => r), created };
}

/** The last id the platform's `user` table gave. */
const LAST_USER = `(SELECT seq FROM sqlite_sequence WHERE name = 'user')`;

export interface MirrorOptions {
  /**
   * The person's own identity changed (their own edit, the super-admin's, their account deleted):
   * every school's copy of them (`school_person`) goes in every database too.
   */
  dropCopies?: boolean;
}

/** The user rows `ids` as a read of a batch (`Batch.mirrorUsers` reads them after its writes). */
export const userRows = (ctx: Ctx, ids: readonly number[]) =>
  query(ctx, { table: users, tenancy: "none", scope: () => undefined }, userRowFields).where(inList(users.id, ids));

/**
 * The user rows `rows` (as the database `from` holds them after a write) copied to every other
 * database of the deployment: one batch per database, in parallel (the anchors updated where they
 * are; `dropCopies`: the schools' copies of the person removed). The platform's row is written
 * with every value (it always exists); a shard without the anchor changes nothing.
 */
export async function mirror(ctx: Ctx, from: Db, rows: readonly UserRow[], options: MirrorOptions = {}) {
  const { shards } = ctx.deps;
  if (!shards || rows.length === 0) return;
  const platform = ctx.deps.platform ?? ctx.deps.db;
  // Every database once, by binding (the platform's under `DB`), but the one the write ran on.
  const targets = new Set(Object.values({ ...shards, [PLATFORM]: platform }));
  targets.delete(from);
  const ids = rows.map((r) => r.id);
  await Promise.all(
    [...targets].map((db) => {
      const update = anchorUpdate(db, rows);
      if (!options.dropCopies) return db.batch([update]);
      return db.batch([update, db.delete(schoolPeople).where(inList(schoolPeople.userId, ids))]);
    }),
  );
}

/**
 * The users of `phones` the platform database knows, for a school's read that found people by
 * phone on its own database: on a shard it sees only the anchors, so those not seen there (`seen`)
 * are read from the platform (one read); on the platform database, nothing to add.
 */
export async function unseenUsers(ctx: SchoolCtx, phones: readonly string[], seen: ReadonlySet<string>) {
  const unseen = phones.filter((phone) => !seen.has(phone));
  if (unseen.length === 0 || !(await holdsAnchors(ctx))) return [];
  return (await resolveUsers(ctx, unseen)).rows;
}

/** The acting users whose anchor this isolate wrote in each shard (then it starts again). */
let anchoredActors = new WeakMap<Db, Set<number>>();
const MAX_ACTORS = 10_000;

/**
 * Forgets which acting users this isolate anchored: a shard's rows were replaced under it (a test
 * file's fresh storage, test/fresh-storage.ts). The handles of a binding live as long as the
 * isolate (src/db/client.ts `d1`), so without this a wiped shard would miss an anchor this isolate
 * wrote before it (a foreign key refused: a 409).
 */
export function forgetAnchoredActors(): void {
  anchoredActors = new WeakMap();
}

/**
 * The acting user's anchor in a shard, at the first batch this isolate commits there for them:
 * a school's rows name who acted (`created_by`, a process's user), who may be a member of no school
 * there (the super-admin). One read of their platform row, once per isolate and shard.
 */
startEveryBatchWith(async (ctx, db) => {
  const platform = ctx.deps.platform ?? ctx.deps.db;
  const actor = ctx.userId;
  if (!ctx.deps.shards || db === platform || actor === null || ctx.schoolId === null) return;
  const noted = anchoredActors.get(db) ?? new Set<number>();
  anchoredActors.set(db, noted);
  if (noted.has(actor)) return;
  const rows = await platform
    .select(userRowFields)
    .from(users)
    .where(inList(users.id, [actor]));
  // Its own batch, before the school's (once per isolate, shard and actor).
  if (rows.length) await db.batch([anchorUpsert(db, rows)]);
  if (noted.size >= MAX_ACTORS) noted.clear();
  noted.add(actor);
});
