/**
 * One supported Node floor, said the same everywhere: `engines` in package.json, the README, `.nvmrc`
 * and the Node this runs on (CI's, a developer's) agree; and every package the lockfile installs
 * runs on the floor by its own `engines`, so `npm ci` prints no EBADENGINE warning, but for the known
 * exceptions below, each with its reason (and each still an exception: remove it when it is not).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../bench/bundle";

const read = (file: string) => readFileSync(join(ROOT, file), "utf8");
const manifest = JSON.parse(read("package.json")) as { engines: { node: string } };
const lock = JSON.parse(read("package-lock.json")) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[]; optional?: boolean }>;
};
const range = manifest.engines.node;
/** The lowest Node the project declares it runs on. */
const floor = semver.minVersion(range)?.version ?? "";

/**
 * Installed packages whose `engines` leave the floor out, and why they stay: npm warns for each.
 * docs/architecture.md ("Tooling versions") says more.
 */
const KNOWN: Record<string, string> = {
  // None: the vitest pool is @cloudflare/vitest-pool-workers 0.15.1, whose miniflare (4.20260426.0,
  // Node >= 18) is wrangler 4.86's own (docs/decisions.md "One miniflare, on Node 20").
};

describe(`Node ${range}`, () => {
  it("is what the README and .nvmrc say, and what this runs on", () => {
    expect(floor).toMatch(/^\d+\.\d+\.\d+$/);
    // "Node 20.19+, 22.12+ or 24 (`.nvmrc`: 20)": each line of the range, and the .nvmrc it names.
    const said = /Node (\d+\.\d+)\+, (\d+\.\d+)\+ or (\d+) \(`\.nvmrc`: ([\d.]+)\)/.exec(read("README.md"));
    expect(said, "the README says which Node versions").not.toBeNull();
    const [, first, second, latest, nvmrc] = said ?? [];
    const readme = `^${first}.0 || >=${second}.0`;
    expect(semver.subset(readme, range) && semver.subset(range, readme), `README ${readme}, engines ${range}`).toBe(
      true,
    );
    expect(semver.satisfies(`${latest}.0.0`, range)).toBe(true);
    expect(floor).toBe(`${first}.0`);
    const pinned = read(".nvmrc").trim();
    expect(pinned).toBe(nvmrc);
    // `nvm use` takes the newest installed release of that line: the line is supported from its floor.
    expect(semver.intersects(`^${semver.coerce(pinned)?.version}`, range)).toBe(true);
    expect(semver.satisfies(process.versions.node, range), `Node ${process.versions.node}`).toBe(true);
  });

  it("is one every installed package runs on, by its own engines (npm ci warns for none but the known)", () => {
    const excluding = Object.entries(lock.packages)
      .filter(([path, entry]) => {
        const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        // npm checks no optional package's engines: one that does not fit is left out, silently.
        return path !== "" && !entry.optional && node !== undefined && !semver.satisfies(floor, node);
      })
      .map(([path]) => path);
    expect(excluding.sort()).toEqual(Object.keys(KNOWN).sort());
  });
});
