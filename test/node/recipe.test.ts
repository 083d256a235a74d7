/**
 * docs/architecture.md "A resource" is the code of test/recipe/ (which test/recipe.test.ts mounts and
 * calls), file for file, with each import written as it reads from the file's place in src/; its
 * migration is what the newcomer's two commands write: drizzle-kit's table, then the permission rows
 * `db:builtins` derives from the module's declaration (scripts/builtin-rows.ts).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { idWritten, permissionRows, withIds } from "../../scripts/builtin-rows";
import { pendingSchemaChange } from "../../scripts/db-snapshot";
import { migrationStatements } from "../../src/db/sql-script";
import { permissions } from "../recipe/note/permissions";

const ROOT = resolve(import.meta.dirname, "../..");
const RECIPE = join(ROOT, "test/recipe");

/** Where each recipe folder lives in a real resource. */
const PLACES: [string, string][] = [
  ["test/recipe/schema/", "src/db/schema/"],
  ["test/recipe/note/", "src/modules/note/"],
  ["src/", "src/"],
];
const placeOf = (file: string) => {
  const rel = relative(ROOT, file);
  const [from, to] = PLACES.find(([prefix]) => rel.startsWith(prefix)) ?? ["", ""];
  return join(ROOT, to, rel.slice(from.length));
};

/** A recipe file as it reads in src/: its relative imports written from there. */
function asInSrc(file: string): { path: string; text: string } {
  const place = placeOf(file);
  const text = readFileSync(file, "utf8").replace(/from "(\.[^"]+)"/g, (_, spec: string) => {
    let target = relative(dirname(place), placeOf(resolve(dirname(file), spec)));
    if (!target.startsWith(".")) target = `./${target}`;
    return `from "${target}"`;
  });
  return { path: relative(ROOT, place), text: text.trim() };
}

const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : [join(dir, n)]));

/** The doc's code blocks that name their file on their first line: `// src/modules/note/index.ts`. */
function docBlocks(): Map<string, string> {
  const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
  const blocks = new Map<string, string>();
  for (const [, body] of doc.matchAll(/```ts\n([\s\S]*?)```/g)) {
    const [first, ...rest] = (body ?? "").split("\n");
    const named = first?.match(/^\/\/ (src\/\S+\.ts)$/);
    if (named?.[1]) blocks.set(named[1], rest.join("\n").trim());
  }
  return blocks;
}

describe("the recipe of a resource", () => {
  it("docs/architecture.md shows each file of test/recipe/ as it is", () => {
    const blocks = docBlocks();
    const files = walk(RECIPE).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBe(4);
    for (const file of files) {
      const { path, text } = asInSrc(file);
      expect(blocks.get(path), `docs/architecture.md's block "// ${path}" (from ${relative(ROOT, file)})`).toBe(text);
    }
  });

  it("its migration is drizzle-kit's table and the permission rows derived from its declaration", () => {
    const [table, ...rows] = readFileSync(join(RECIPE, "migration.sql"), "utf8").split(
      /\n--> statement-breakpoint\n(?=-- Built-in)/,
    );
    expect(migrationStatements(rows.join("\n"))).toEqual(permissionRows(Object.values(permissions)));
    const drizzle = execFileSync(
      join(ROOT, "node_modules/.bin/drizzle-kit"),
      ["export", "--dialect", "sqlite", "--schema", "test/recipe/schema/note.ts"],
      { cwd: ROOT, encoding: "utf8" },
    );
    const statements = (sql: string) =>
      sql
        .split(/;\s*(?:--> statement-breakpoint)?\s*\n?/)
        .map((s) => s.trim())
        .filter(Boolean);
    expect(statements(table ?? "")).toEqual(statements(drizzle));
  }, 60_000);

  it("derives every grant: the super-admin and each role the declaration names", () => {
    expect(permissionRows(Object.values(permissions)).filter((r) => r.includes("role_permission"))).toEqual(
      ["(1, 990)", "(1, 991)", "(2, 990)", "(2, 991)", "(3, 990)", "(3, 991)", "(4, 990)"].map(
        (v) => `INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES ${v};`,
      ),
    );
  });

  it("gives a permission declared without an id the next free one, and writes it where it is declared", () => {
    const given: string[] = [];
    const ids = withIds(
      [
        { id: 170, name: "a.read", description: "A", grants: [] },
        { name: "note.read", description: "B", grants: [] },
        { id: 171, name: "b.read", description: "C", grants: [] },
        { name: "note.write", description: "D", grants: [] },
      ],
      (p) => given.push(`${p.name} ${p.id}`),
    );
    expect(ids.map((p) => p.id)).toEqual([170, 172, 171, 173]);
    expect(given).toEqual(["note.read 172", "note.write 173"]);
    const text = readFileSync(join(RECIPE, "note/permissions.ts"), "utf8").replace("id: 990, ", "");
    expect(idWritten(text, "note.read", 172)).toContain('read: { id: 172, name: "note.read"');
  });

  it("db:generate has nothing to add: every migration left the schema's snapshot behind", () => {
    // A migration written by hand without its snapshot: the next generated one would repeat it.
    expect(
      pendingSchemaChange()?.sql,
      "if the migrations already make this, `npm run -s db:snapshot -- --write` (scripts/db-snapshot.ts)",
    ).toBeUndefined();
  }, 60_000);
});
