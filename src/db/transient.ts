/**
 * Database hiccups, recognised in one place for D1 and libSQL: a lock another writer holds, a
 * dropped connection, a D1 reset or overload, a libSQL server out of reach. The store wrappers
 * (src/db/client.ts for the D1 binding, src/db/libsql.ts for the libSQL client) call `again` when a
 * statement or batch fails; what still fails reaches the caller as `DatabaseUnavailable`, which the
 * app answers with a 503 and `retry-after` (src/lib/errors.ts), the bulk consumer by retrying the
 * message, and a cron run by recording itself failed. docs/decisions.md "Database hiccups".
 *
 * What may run once more depends on whether the failed work can have run (a D1 batch and a libSQL
 * batch are each one transaction, so either all of it committed or none):
 * - `refused`: the database refused it before running it (SQLite could not take the lock, which
 *   rolls the transaction back; the request never reached the database; D1 was starting up).
 *   Nothing was written, so reads and writes alike run once more.
 * - `unknown`: it may have run (the connection dropped after it was sent, the database reset
 *   while it ran). Reads run once more; writes never do, or a batch that committed would commit
 *   twice.
 * - `overloaded`: refused before running, but because the database is saturated: asking again
 *   adds to the queue that refused it, so nothing runs again here and the answer says when to.
 */
import { errorFields, type LogFields, log } from "../lib/log";
import { currentRequest } from "../lib/metrics";

type Outcome = "refused" | "unknown" | "overloaded";

/**
 * The error texts, in the order they are tried (the most specific first): D1's list of
 * `D1_ERROR`s (developers.cloudflare.com/d1/observability/debug-d1) and local D1's SQLite errors;
 * libSQL's `SQLITE_BUSY` and its HTTP client's failures (Node's fetch names the socket error in the
 * cause, workerd's fetch says "Network connection lost." or "internal error; reference = ...").
 * Not here, because running the same query again fails the same way: D1's "exceeded its CPU time
 * limit" and "exceeded its memory limit", constraint and syntax errors.
 */
const KNOWN: readonly { pattern: RegExp; outcome: Outcome; reason: string }[] = [
  { pattern: /D1 DB is overloaded/, outcome: "overloaded", reason: "the database is overloaded" },
  { pattern: /SQLITE_BUSY|database is locked/, outcome: "refused", reason: "the database is locked by another writer" },
  {
    pattern: /Cannot resolve D1 DB due to transient issue|Internal error while starting up D1 DB storage/,
    outcome: "refused",
    reason: "the database is starting up",
  },
  {
    pattern: /ECONNREFUSED|ENOTFOUND|EAI_AGAIN/,
    outcome: "refused",
    reason: "the database server cannot be reached",
  },
  {
    pattern:
      /reset because its code was updated|storage caused object to be reset|exceeded timeout which caused object to be reset/,
    outcome: "unknown",
    reason: "the database was restarted",
  },
  {
    pattern:
      /Network connection lost|[Cc]onnection reset|ECONNRESET|EPIPE|socket hang up|fetch failed|client disconnected/,
    outcome: "unknown",
    reason: "the connection to the database was lost",
  },
  {
    // The runtime's own failure (a fetch to a host no resolver knows, an internal D1 fault).
    pattern: /internal error; reference = /,
    outcome: "unknown",
    reason: "the database could not be reached",
  },
  {
    pattern: /Server returned HTTP status (502|503|504)/,
    outcome: "unknown",
    reason: "the database server is unavailable",
  },
];

/** Seconds a caller is told to wait: a lock or a dropped connection passes quickly, an overload less so. */
const RETRY_AFTER_SECONDS: Record<Outcome, number> = { refused: 2, unknown: 2, overloaded: 10 };

/** The error's messages and codes, and its causes', as one text (only read on a failure). */
function describe(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    if (e instanceof Error) {
      parts.push(e.message);
      const code = "code" in e ? e.code : undefined;
      if (typeof code === "string") parts.push(code);
      e = e.cause;
    } else {
      parts.push(String(e));
      break;
    }
  }
  return parts.join("\n");
}

/** What kind of hiccup `err` is, or undefined when it is not one (a bug, a constraint, bad SQL). */
export function transient(err: unknown): { outcome: Outcome; reason: string } | undefined {
  if (err instanceof DatabaseUnavailable) return err.hiccup;
  const text = describe(err);
  for (const known of KNOWN) if (known.pattern.test(text)) return known;
  return undefined;
}

/** The database is briefly unavailable: a 503 with `retry-after` for a request. */
export class DatabaseUnavailable extends Error {
  override name = "DatabaseUnavailable";
  readonly retryAfterSeconds: number;
  constructor(
    readonly hiccup: { outcome: Outcome; reason: string },
    cause: unknown,
  ) {
    super(`The database is unavailable (${hiccup.reason})`, { cause });
    this.retryAfterSeconds = RETRY_AFTER_SECONDS[hiccup.outcome];
  }
}

/** The `DatabaseUnavailable` behind `err`, if any (drizzle wraps a failed query in an error of its own). */
export function unavailable(err: unknown): DatabaseUnavailable | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof DatabaseUnavailable) return e;
  }
  return undefined;
}

/** What a failure says where operators read it (a job run's detail): a database hiccup as the hiccup, never the failed query. */
export function failureDetail(err: unknown): string {
  const down = unavailable(err);
  return down ? down.message : err instanceof Error ? err.message : String(err);
}

/** Log fields of a failure: a database hiccup by its reason and the driver's error. */
export function failureFields(err: unknown): LogFields {
  const down = unavailable(err);
  return down ? { reason: down.hiccup.reason, ...errorFields(down.cause) } : errorFields(err);
}

/**
 * SQL that only reads: a SELECT, or a WITH that writes nothing (what D1 itself treats as
 * read-only). Anything else counts as a write, so a doubt never runs a write twice.
 */
export function readsOnly(sql: string): boolean {
  return /^\s*select\b/i.test(sql) || (/^\s*with\b/i.test(sql) && !/\b(insert|update|delete|replace)\b/i.test(sql));
}

/** Backoff before the one more try: long enough for a lock to pass, short for a waiting caller. */
const BACKOFF_MS = 50;

/**
 * Called with the error of a failed statement or batch: runs `retry` once more after a short
 * backoff when the error is a hiccup and running again is safe (it was `refused`, or `read` says
 * the work only reads), and answers what it answers. Otherwise, or when that fails with a hiccup
 * too, throws `DatabaseUnavailable`; any other error is rethrown as it is.
 * `retry: undefined` never runs again (work that is not one transaction: a multi-statement exec).
 */
export async function again<T>(err: unknown, read: boolean, retry: (() => Promise<T>) | undefined): Promise<T> {
  const hiccup = transient(err);
  if (!hiccup) throw err;
  const safe = hiccup.outcome === "refused" || (hiccup.outcome === "unknown" && read);
  if (!retry || !safe) throw new DatabaseUnavailable(hiccup, err);
  log.warn("database hiccup; trying once more", { requestId: currentRequest()?.requestId, reason: hiccup.reason });
  await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS + Math.random() * BACKOFF_MS));
  try {
    return await retry();
  } catch (second) {
    const next = transient(second);
    if (!next) throw second;
    throw new DatabaseUnavailable(next, second);
  }
}
