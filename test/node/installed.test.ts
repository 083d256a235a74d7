/**
 * `scripts/installed.mjs`: `npm test`, `typecheck` and `dev` first say "run npm ci" when
 * node_modules is not what package-lock.json locks (a dependency replaced since the last install),
 * instead of failing later on a type file or a module that names no cause.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script, no declaration file
import { differences } from "../../scripts/installed.mjs";

function project(installed: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "installed-"));
  const lock = {
    packages: {
      "": { dependencies: { a: "^1.0.0" }, devDependencies: { b: "2.0.0" } },
      "node_modules/a": { version: "1.2.0" },
      "node_modules/b": { version: "2.0.0" },
    },
  };
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify(lock));
  for (const [name, version] of Object.entries(installed)) {
    mkdirSync(join(dir, "node_modules", name), { recursive: true });
    writeFileSync(join(dir, "node_modules", name, "package.json"), JSON.stringify({ name, version }));
  }
  return dir;
}

describe("scripts/installed.mjs", () => {
  it("passes when every direct dependency is installed at its locked version", () => {
    expect(differences(project({ a: "1.2.0", b: "2.0.0" }))).toEqual([]);
  });
  it("names a package missing and one at another version", () => {
    expect(differences(project({ a: "1.1.0" }))).toEqual([
      ["a", "1.2.0", "1.1.0"],
      ["b", "2.0.0", undefined],
    ]);
  });
  it("passes on this checkout once installed (CI runs npm ci first)", () => {
    expect(differences()).toEqual([]);
  });
});
