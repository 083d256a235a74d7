/**
 * One write, one round trip: a `Batch` collects the statements of a verb (its writes, their audit
 * rows and guards, and the reads that answer it) and commits them as one D1 `batch()` — one
 * transaction, all or nothing. The results a verb needs are asked for by slot, so they come back
 * typed whatever their position:
 *
 * @example
 * const batch = new Batch(ctx).add(...Documents.insert(ctx, values));
 * const created = batch.read(Documents.select(ctx).where(eq(documents.id, Documents.insertedId())));
 * const [row] = (await batch.commit({ conflict: "A document with this slug exists" })).get(created);
 */
import type { RunnableQuery } from "drizzle-orm/runnable-query";
import type { Ctx } from "../lib/context";
import { type MirrorOptions, mirror, userRows } from "./anchors";
import type { Query } from "./query";
import { databaseOf } from "./shards";
import { type CommitMessages, commit, type Statement } from "./write";

/** What a statement answers in a batch: a query its rows, a write its `returning` rows or run result. */
export type ResultOf<S> = S extends RunnableQuery<infer R, "sqlite"> ? R : never;

/** A typed handle on one statement's result. */
export interface Slot<T> {
  readonly index: number;
  /** Never set: carries the result's type. */
  readonly _type?: T;
}

export class Results {
  constructor(private readonly results: readonly unknown[]) {}

  /** The result of the statement `slot` was given for. */
  get<T>(slot: Slot<T>): T {
    // The batch answers each statement's result at its index; the slot was typed from that statement.
    return this.results[slot.index] as T;
  }
}

export class Batch {
  private readonly statements: Statement[] = [];
  /** Whether it writes (a batch of reads alone is not guarded by an If-Match: src/db/write.ts). */
  private writes = false;

  /** The `user` rows this batch writes, copied to the other databases after it (src/db/anchors.ts). */
  private mirrored?: { ids: number[]; options: MirrorOptions };

  /**
   * `source`: the table the batch is about, when it is a platform table (`tenancy: "none"`): the
   * batch then runs on the platform database, whatever school the context is in (a school's
   * anchors are copied after it: docs/scaling.md "Anchors"). Else on the context's database.
   */
  constructor(
    private readonly ctx: Ctx,
    private readonly source?: { readonly tenancy?: string },
  ) {}

  /**
   * This batch writes the `user` rows `ids`: once it commits, they are copied as they stand to
   * every other database that holds them (src/db/anchors.ts `mirror`).
   */
  mirrorUsers(ids: readonly number[], options: MirrorOptions = {}): this {
    this.mirrored = {
      ids: [...new Set([...(this.mirrored?.ids ?? []), ...ids])],
      options: { dropCopies: this.mirrored?.options.dropCopies || options.dropCopies },
    };
    return this;
  }

  /** Adds statements whose results nobody reads. */
  add(...statements: readonly Statement[]): this {
    this.statements.push(...statements);
    if (statements.length > 0) this.writes = true;
    return this;
  }

  /** Adds a read; its rows come back from `Results.get`. */
  read<Row>(query: Query<Row>): Slot<Row[]> {
    this.statements.push(query.runnable());
    return { index: this.statements.length - 1 };
  }

  /** Adds a write whose result is needed (its `returning` rows). */
  result<S extends Statement>(statement: S): Slot<ResultOf<S>> {
    this.statements.push(statement);
    this.writes = true;
    return { index: this.statements.length - 1 };
  }

  get size(): number {
    return this.statements.length;
  }

  /**
   * Runs every statement as one batch; constraint errors become 409s, a failed guard `GuardFailed`.
   * A batch that writes `user` rows (`mirrorUsers`) reads them back at its end, then copies them to
   * the other databases.
   */
  async commit(messages?: CommitMessages): Promise<Results> {
    const mirrored = this.writes && this.ctx.deps.shards ? this.mirrored : undefined;
    const slot = mirrored ? this.read(userRows(this.ctx, mirrored.ids)) : undefined;
    const [first, ...rest] = this.statements;
    if (!first) return new Results([]);
    // A batch of reads alone runs on the context's database as it is: no If-Match guard, nothing
    // before it, and served while the school is paused for a move.
    const results = new Results(await commit(this.ctx, [first, ...rest], messages, this.source, this.writes));
    if (mirrored && slot) {
      await mirror(this.ctx, await databaseOf(this.ctx, this.source), results.get(slot), mirrored.options);
    }
    return results;
  }
}
