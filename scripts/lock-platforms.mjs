// Completes package-lock.json with the platform builds this machine's registry does not serve.
//
// Packages like @biomejs/biome and workerd list one optional package per platform. When the
// registry answers 404 for the builds of other platforms (darwin, windows, musl), npm leaves them
// out of the lock, and `npm ci` then refuses the lock as out of sync. This adds each missing one
// as an optional entry with its platform, so `npm ci` skips it on other platforms as it would with
// a complete lock. Run after `npm install` changes the lock: `node scripts/lock-platforms.mjs`.
import { readFileSync, writeFileSync } from "node:fs";

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const platform = (name) => {
  const os = /darwin/.test(name)
    ? "darwin"
    : /win32|windows/.test(name)
      ? "win32"
      : /android/.test(name)
        ? "android"
        : /linux/.test(name)
          ? "linux"
          : undefined;
  const cpu = /arm64|aarch64/.test(name) ? "arm64" : /x64|64$/.test(name) ? "x64" : undefined;
  const libc = /musl/.test(name) ? "musl" : undefined;
  return { ...(os && { os: [os] }), ...(cpu && { cpu: [cpu] }), ...(libc && { libc: [libc] }) };
};
let added = 0;
for (const [path, pkg] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(pkg.optionalDependencies ?? {})) {
    // Platform builds are pinned to an exact version and name their platform.
    if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version) || !platform(name).os) continue;
    // Node's resolution from `path`: its own node_modules, then each enclosing one, then the top.
    const candidates = [];
    for (
      let dir = path;
      dir;
      dir = dir.includes("/node_modules/") ? dir.slice(0, dir.lastIndexOf("/node_modules/")) : ""
    ) {
      candidates.push(`${dir}/node_modules/${name}`);
    }
    candidates.push(`node_modules/${name}`);
    const found = candidates.find((c) => lock.packages[c]);
    if (found && lock.packages[found].version === version) continue;
    // Where a build of another version already sits at the top, this one goes beside its parent.
    const target = found ? candidates[0] : `node_modules/${name}`;
    lock.packages[target] = { version, ...(pkg.dev && { dev: true }), optional: true, ...platform(name) };
    added++;
  }
}
writeFileSync("package-lock.json", `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} platform entries added`);
