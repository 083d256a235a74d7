/**
 * Ranges whose end must not come before their start (a school year, a holiday cycle). Values
 * compare as text: `YYYY-MM-DD` and UTC `toISOString()` (what src/lib/dates.ts's `dateTime`
 * answers) sort in time order.
 */
import type { SchoolCtx } from "../../lib/context";
import { invalidBody } from "../../lib/errors";
import { m } from "../../lib/message";

type Range = { start: string; end: string };

/** Refuses `end` before `start` as a 400 on the field `endField` (equal is allowed). */
export function assertOrdered(range: Range, startField: string, endField: string) {
  if (range.end < range.start) {
    const message = m`Must not be before ${startField}`;
    throw invalidBody([{ path: endField, message }]);
  }
}

/**
 * The range an update leaves: the sent ends over the stored ones (`stored` is read only when one
 * end is missing). Returns both ends so the pair is written together: a concurrent update of the
 * other end cannot leave a reversed range, the last writer wins for the pair.
 */
export async function updatedRange(
  sent: Partial<Range>,
  stored: () => Promise<Range>,
  startField: string,
  endField: string,
): Promise<Range | undefined> {
  if (sent.start === undefined && sent.end === undefined) return undefined;
  let range: Range;
  if (sent.start !== undefined && sent.end !== undefined) range = { start: sent.start, end: sent.end };
  else {
    const current = await stored();
    range = { start: sent.start ?? current.start, end: sent.end ?? current.end };
  }
  assertOrdered(range, startField, endField);
  return range;
}

/**
 * The `values` hook of an update whose `startField` must not come after `endField`:
 * `stored` reads the record (lazily, so a resource can pass its own `service.get`).
 */
export function orderedRangeUpdate<S extends string, E extends string>(
  startField: S,
  endField: E,
  stored: (ctx: SchoolCtx, id: number) => Promise<Record<S | E, string>>,
) {
  return async <I extends Partial<Record<S | E, string>>>(
    ctx: SchoolCtx,
    { id, body: input }: { id: number; body: I },
  ): Promise<I> => {
    const range = await updatedRange(
      { start: input[startField], end: input[endField] },
      async () => {
        const row = await stored(ctx, id);
        return { start: row[startField], end: row[endField] };
      },
      startField,
      endField,
    );
    return range ? { ...input, [startField]: range.start, [endField]: range.end } : input;
  };
}
