/**
 * The demo seed over the databases (docs/scaling.md "Shards"). seed/demo.sql is one script, and its
 * shard map rows (`school_shard`) say which database holds each demo school (a school without one is
 * on `DB`). `seedByDatabase` splits it at load time, row by row, by `school_id`:
 * - platform rows (tables without a `school_id`, and rows whose `school_id` is null) go to `DB`;
 * - a school's rows go to its database;
 * - the anchors (docs/scaling.md "Anchors"): a school's `school` row, whole, to `DB` and to its
 *   database; each `user` row that a school's rows name (a column that references `user`), whole,
 *   to `DB` and to every other database whose schools name it.
 * Each database's statements keep the seed's order, so the rows a row points at come before it
 * there as they do in the script. The ids the seed gives rows in another database stay taken in
 * the platform's (its AUTOINCREMENT sequences set past them), so record ids stay unique across
 * databases as they are at run time (docs/scaling.md "Record ids"). Every place that loads the demo loads it this way: the tests'
 * fresh storage (test/fresh-storage.ts), `npm run dev` (scripts/dev.ts), the Chromium tests' dev
 * state (test/node/dev-state.ts) and bench:peak. One database (libSQL, the benchmark's single D1)
 * loads the script whole.
 *
 * Pure string work, like the date shifting that comes before it (src/db/demo-today.ts): a
 * statement this cannot place (a school's statement naming two schools, a `user` row written as
 * anything but VALUES rows) is an error, not a guess.
 */
import { cell, type Part, scan } from "./demo-today";
import { dumpTables } from "./dump";
import { PLATFORM } from "./shards";
import { scriptStatements } from "./sql-script";

const unquote = (text: string) => (text.startsWith("'") ? text.slice(1, -1).replaceAll("''", "'") : text);
const numberOf = (text: string | undefined) => (text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined);

/** The tables with a `school_id` column, and each table's columns that reference `user`. */
function schemaFacts() {
  const schoolTables = new Set<string>();
  const userColumns = new Map<string, string[]>();
  for (const table of dumpTables()) {
    if (table.school) schoolTables.add(table.name);
    const columns = table.references.filter((r) => r.table === "user").map((r) => r.column.name);
    if (columns.length > 0) userColumns.set(table.name, columns);
  }
  return { schoolTables, userColumns };
}

/** The schools a statement's text names (`school_id = N`). */
const schoolsNamed = (text: string) => new Set([...text.matchAll(/\bschool_id\s*=\s*(\d+)/g)].map((m) => Number(m[1])));

/**
 * Each database's statements of `seed` (after its dates are moved, if they are), by binding name,
 * `DB` first; a database with nothing to load is left out.
 */
export function seedByDatabase(seed: string): Map<string, string[]> {
  const { schoolTables, userColumns } = schemaFacts();
  const statements = scriptStatements(seed).map((text) => ({ text, parts: scan(text).parts }));

  // The map: each demo school's database.
  const shardOfSchool = new Map<number, string>();
  for (const { text, parts } of statements) {
    for (const part of parts) {
      if (part.table !== "school_shard") continue;
      const school = numberOf(cell(text, part, "school_id"));
      const binding = cell(text, part, "binding");
      if (school === undefined || binding === undefined) throw new Error(`a shard map row of the seed: ${text}`);
      shardOfSchool.set(school, unquote(binding));
    }
  }
  const databaseOf = (school: number) => shardOfSchool.get(school) ?? PLATFORM;

  /** The school a row (or a statement of another shape) belongs to; undefined for a platform row. */
  const schoolOf = (text: string, part: Part): number | undefined => {
    if (part.table === "school") {
      const id = part.columns.length > 0 ? numberOf(cell(text, part, "id")) : part.statementSchool;
      if (id === undefined) throw new Error(`a school statement of the seed that names no school: ${text}`);
      return id;
    }
    // The shard map is the platform's, though a row of it names a school.
    if (!schoolTables.has(part.table) || part.table === "school_shard") return undefined;
    if (part.columns.length === 0) {
      const named = schoolsNamed(text);
      if (named.size !== 1) throw new Error(`a statement of the seed that names ${named.size} schools: ${text}`);
      return [...named][0];
    }
    const value = cell(text, part, "school_id");
    const school = numberOf(value);
    if (school === undefined && value !== "NULL")
      throw new Error(`a row of the seed whose school is not a number: ${text}`);
    if (school !== undefined) {
      const row = text.slice(part.start, part.end);
      for (const other of schoolsNamed(row)) {
        if (other !== school) throw new Error(`a row of school ${school} in the seed names school ${other}: ${row}`);
      }
    }
    return school;
  };

  // The users each database other than the platform's holds an anchor of: those its schools' rows name.
  const anchoredIn = new Map<number, Set<string>>();
  for (const { text, parts } of statements) {
    for (const part of parts) {
      const columns = userColumns.get(part.table);
      if (!columns || part.columns.length === 0) continue;
      const school = schoolOf(text, part);
      if (school === undefined || databaseOf(school) === PLATFORM) continue;
      for (const column of columns) {
        const value = cell(text, part, column);
        const user = numberOf(value);
        if (user === undefined) {
          if (value === undefined || value === "NULL") continue;
          throw new Error(
            `a row of school ${school} in the seed names a user that is not a number (${column}): ${text}`,
          );
        }
        const set = anchoredIn.get(user) ?? new Set<string>();
        set.add(databaseOf(school));
        anchoredIn.set(user, set);
      }
    }
  }

  /** The databases a row goes to: its school's, the platform's for a platform row, and its anchors'. */
  const destinations = (text: string, part: Part): string[] => {
    if (part.table === "user") {
      const id = numberOf(cell(text, part, "id"));
      if (part.columns.length === 0 || id === undefined) {
        throw new Error(`a user row of the seed not written as VALUES with a numeric id: ${text}`);
      }
      return [PLATFORM, ...(anchoredIn.get(id) ?? [])];
    }
    const school = schoolOf(text, part);
    if (school === undefined) return [PLATFORM];
    if (part.table === "school") return [...new Set([PLATFORM, databaseOf(school)])];
    return [databaseOf(school)];
  };

  const out = new Map<string, string[]>([[PLATFORM, []]]);
  const add = (binding: string, ...statement: string[]) => {
    const list = out.get(binding) ?? [];
    list.push(...statement);
    out.set(binding, list);
  };
  /** Each table's largest id the seed writes to a database other than the platform's. */
  const taken = new Map<string, number>();
  for (const { text, parts } of statements) {
    const first = parts[0];
    const last = parts.at(-1);
    if (!first || !last) continue;
    if (first.columns.length === 0) {
      // A statement of another shape (an UPDATE, an INSERT ... SELECT): one part, the whole of it.
      for (const binding of destinations(text, first)) add(binding, text);
      continue;
    }
    // INSERT ... VALUES: its rows, each to its databases, under the statement's own head and tail.
    const rows = new Map<string, string[]>();
    for (const part of parts) {
      for (const binding of destinations(text, part)) {
        const list = rows.get(binding) ?? [];
        list.push(text.slice(part.start, part.end));
        rows.set(binding, list);
      }
    }
    const head = text.slice(0, first.start);
    const tail = text.slice(last.end);
    for (const [binding, list] of rows) add(binding, `${head}${list.join(",\n  ")}${tail}`);
    // The ids the seed gives a school's rows elsewhere stay taken in the platform's database too.
    if (anchored(first.table)) continue;
    for (const part of parts) {
      const id = numberOf(cell(text, part, "id"));
      if (id !== undefined && !destinations(text, part).includes(PLATFORM)) {
        taken.set(first.table, Math.max(taken.get(first.table) ?? 0, id));
      }
    }
  }
  // Record ids are unique across databases (docs/scaling.md "Record ids"): the platform's database
  // starts each table's new ids after those the seed wrote in another database, as it did when it
  // held every demo row (a shard's own ids are above its range's floor whatever the seed wrote).
  for (const [table, id] of taken) add(PLATFORM, ...sequenceAtLeast(table, id));
  if (out.get(PLATFORM)?.length === 0) out.delete(PLATFORM);
  return out;
}

/** The anchored tables: their rows are in the platform's database as well. */
const anchored = (table: string) => table === "user" || table === "school";

/** The statements that make `table`'s next AUTOINCREMENT id above `id` (a table without one: nothing). */
function sequenceAtLeast(table: string, id: number): string[] {
  const name = `'${table.replaceAll("'", "''")}'`;
  return [
    `INSERT INTO sqlite_sequence (name, seq) SELECT m.name, ${id} FROM sqlite_master m WHERE m.type = 'table' AND m.name = ${name} AND m.sql LIKE '%AUTOINCREMENT%' AND NOT EXISTS (SELECT 1 FROM sqlite_sequence s WHERE s.name = ${name})`,
    `UPDATE sqlite_sequence SET seq = ${id} WHERE name = ${name} AND seq < ${id}`,
  ];
}

/**
 * The whole seed for a deployment of one database (the benchmark's single D1): every statement but
 * the shard map's, so every demo school is on `DB` (a school without a map row is). A libSQL
 * deployment may load the script as written: it has no shards, and reads no map.
 */
export function seedOnOneDatabase(seed: string): string[] {
  return scriptStatements(seed).filter((text) => scan(text).parts[0]?.table !== "school_shard");
}
