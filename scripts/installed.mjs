#!/usr/bin/env node
/**
 * Whether node_modules is what package-lock.json says: every direct dependency installed at its
 * locked version. A checkout that changed dependencies (a package replaced, a version moved) and was
 * not installed again otherwise fails later with an error that names a type file or a module, not
 * the cause. Run first by `npm test`, `npm run typecheck` and `npm run dev`.
 *
 *   node scripts/installed.mjs        exit 1 with what differs and "run npm ci"
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;

/** The direct dependencies whose installed version is not the locked one: `[name, locked, installed]`. */
export function differences(dir = root) {
  const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8"));
  const top = lock.packages?.[""] ?? {};
  const names = Object.keys({ ...top.dependencies, ...top.devDependencies });
  const out = [];
  for (const name of names) {
    const locked = lock.packages?.[`node_modules/${name}`]?.version;
    const file = join(dir, "node_modules", name, "package.json");
    const installed = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).version : undefined;
    if (locked !== undefined && installed !== locked) out.push([name, locked, installed]);
  }
  return out;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const found = differences();
  if (found.length) {
    const lines = found.map(([n, l, i]) => `  ${n}: locked ${l}, installed ${i ?? "none"}`);
    process.stderr.write(`node_modules is not what package-lock.json says:\n${lines.join("\n")}\nRun \`npm ci\`.\n`);
    process.exit(1);
  }
}
