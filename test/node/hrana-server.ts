/**
 * A libSQL server for tests: the Hrana v2 protocol over HTTP (`POST /v2/pipeline`, JSON), the one
 * `@libsql/client/web` speaks by default, in front of a real local libSQL database (the Node
 * client on a `file:` URL). It lets the libSQL Worker bundle (src/index.libsql.ts) run in workerd
 * against libSQL without `sqld` or Turso. It answers what that client sends: `execute`, `batch`
 * (with step conditions: the transaction of `client.batch()`), `store_sql`/`close_sql`, `close`.
 * Streams are opened and closed within one pipeline (no interactive transactions), so no baton.
 * The Node client lends a connection per call and rolls back what a call leaves open, so a batch's
 * BEGIN ... COMMIT steps run as one of its transactions (what `sqld` does on the stream's connection).
 * Spec: https://github.com/tursodatabase/libsql/blob/main/docs/HRANA_2_SPEC.md
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Client, InValue, ResultSet, Transaction } from "@libsql/client";

type Value =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };
type Stmt = {
  sql?: string;
  sql_id?: number;
  args?: Value[];
  named_args?: { name: string; value: Value }[];
  want_rows?: boolean;
};
type Cond =
  | { type: "ok" | "error"; step: number }
  | { type: "not"; cond: Cond }
  | { type: "and" | "or"; conds: Cond[] };
type StreamRequest =
  | { type: "execute"; stmt: Stmt }
  | { type: "batch"; batch: { steps: { condition?: Cond | null; stmt: Stmt }[] } }
  | { type: "store_sql"; sql_id: number; sql: string }
  | { type: "close_sql"; sql_id: number }
  | { type: "close" };

const toIn = (v: Value): InValue => {
  switch (v.type) {
    case "null":
      return null;
    case "integer":
      return BigInt(v.value);
    case "float":
    case "text":
      return v.value;
    case "blob":
      return Buffer.from(v.base64, "base64");
  }
};

const toHrana = (v: unknown): Value => {
  if (v === null || v === undefined) return { type: "null" };
  if (typeof v === "bigint") return { type: "integer", value: String(v) };
  if (typeof v === "number") return { type: "float", value: v };
  if (typeof v === "string") return { type: "text", value: v };
  if (v instanceof ArrayBuffer) return { type: "blob", base64: Buffer.from(v).toString("base64") };
  throw new Error(`hrana: cannot encode ${typeof v}`);
};

const result = (rs: ResultSet) => ({
  cols: rs.columns.map((name, i) => ({ name, decltype: rs.columnTypes[i] || null })),
  rows: rs.rows.map((row) => rs.columns.map((_, i) => toHrana(row[i]))),
  affected_row_count: rs.rowsAffected,
  last_insert_rowid: rs.lastInsertRowid === undefined ? null : String(rs.lastInsertRowid),
});

const failure = (err: unknown) => ({
  message: err instanceof Error ? err.message : String(err),
  ...(err && typeof err === "object" && "code" in err ? { code: String(err.code) } : {}),
});

/**
 * Serves `client` (give it `intMode: "bigint"`, so integers and floats stay apart) on 127.0.0.1.
 * `requests` counts the pipelines received.
 */
export async function startHranaServer(client: Client) {
  const sqls = new Map<number, string>();
  const stats = { requests: 0 };
  // One pipeline at a time: a batch's BEGIN ... COMMIT must not interleave with another's.
  let queue = Promise.resolve();

  const NOTHING = { columns: [], columnTypes: [], rows: [], rowsAffected: 0, lastInsertRowid: undefined };
  /** Runs a statement; `state.tx` is the transaction a batch's BEGIN opened. */
  const execute = async (stmt: Stmt, state: { tx?: Transaction } = {}): Promise<ResultSet> => {
    const sql = stmt.sql ?? sqls.get(stmt.sql_id ?? -1);
    if (sql === undefined) throw new Error(`unknown sql_id ${stmt.sql_id}`);
    const keyword =
      /^\s*(\w+)(?:\s+(\w+))?/
        .exec(sql)
        ?.slice(1)
        .map((w) => w?.toUpperCase()) ?? [];
    if (keyword[0] === "BEGIN") {
      if (state.tx) throw new Error("cannot start a transaction within a transaction");
      state.tx = await client.transaction(
        keyword[1] === "IMMEDIATE" || keyword[1] === "EXCLUSIVE" ? "write" : "deferred",
      );
      return NOTHING as unknown as ResultSet;
    }
    if (keyword[0] === "COMMIT" || keyword[0] === "END" || keyword[0] === "ROLLBACK") {
      const tx = state.tx;
      if (!tx) throw new Error(`cannot ${keyword[0].toLowerCase()} - no transaction is active`);
      state.tx = undefined;
      await (keyword[0] === "ROLLBACK" ? tx.rollback() : tx.commit());
      return NOTHING as unknown as ResultSet;
    }
    const args = stmt.named_args?.length
      ? Object.fromEntries(stmt.named_args.map((a) => [a.name.replace(/^[:@$]/, ""), toIn(a.value)]))
      : (stmt.args ?? []).map(toIn);
    return (state.tx ?? client).execute({ sql, args });
  };

  async function handle(req: StreamRequest) {
    switch (req.type) {
      case "execute":
        return { type: "execute", result: result(await execute(req.stmt)) };
      case "batch": {
        const results: (ReturnType<typeof result> | null)[] = [];
        const errors: (ReturnType<typeof failure> | null)[] = [];
        const holds = (c: Cond): boolean => {
          switch (c.type) {
            case "ok":
              return results[c.step] != null;
            case "error":
              return errors[c.step] != null;
            case "not":
              return !holds(c.cond);
            case "and":
              return c.conds.every(holds);
            case "or":
              return c.conds.some(holds);
          }
        };
        const state: { tx?: Transaction } = {};
        for (const step of req.batch.steps) {
          results.push(null);
          errors.push(null);
          if (step.condition && !holds(step.condition)) continue;
          try {
            results[results.length - 1] = result(await execute(step.stmt, state));
          } catch (err) {
            errors[errors.length - 1] = failure(err);
          }
        }
        await state.tx?.rollback();
        return { type: "batch", result: { step_results: results, step_errors: errors } };
      }
      case "store_sql":
        sqls.set(req.sql_id, req.sql);
        return { type: "store_sql" };
      case "close_sql":
        sqls.delete(req.sql_id);
        return { type: "close_sql" };
      case "close":
        return { type: "close" };
    }
  }

  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", () => {
      queue = queue.then(async () => {
        if (req.method !== "POST" || req.url !== "/v2/pipeline") {
          res.writeHead(404).end();
          return;
        }
        stats.requests++;
        const body = JSON.parse(raw) as { baton: string | null; requests: StreamRequest[] };
        const results = [];
        for (const r of body.requests) {
          try {
            results.push({ type: "ok", response: await handle(r) });
          } catch (err) {
            results.push({ type: "error", error: failure(err) });
          }
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ baton: null, base_url: null, results }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
