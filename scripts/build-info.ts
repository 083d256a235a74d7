/**
 * What a build says of itself, as wrangler `--define`s: the commit, its date, the build's date and
 * the last migration the code expects (src/modules/health/build.ts reads them; /api/health reports
 * them). Used by scripts/wrangler.ts (every `npm run dev`, `build`, `deploy`) and the bench's build.
 * `BUILD_COMMIT` in the environment names the commit where git is not at hand (a CI checkout).
 */
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";

const git = (root: string, args: string[]): string | undefined => {
  try {
    return execFileSync("git", args, { cwd: root, stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  } catch {
    return undefined;
  }
};

/** The commit (with `-dirty` when tracked files changed), when it was made, and the last migration. */
export function buildInfo(root: string) {
  const sha = process.env.BUILD_COMMIT || git(root, ["rev-parse", "--short=12", "HEAD"]);
  const dirty = !process.env.BUILD_COMMIT && !!git(root, ["status", "--porcelain", "--untracked-files=no"]);
  const migrations = readdirSync(path.join(root, "migrations"))
    .filter((f) => f.endsWith(".sql"))
    .sort();
  return {
    commit: sha ? `${sha}${dirty ? "-dirty" : ""}` : "unknown",
    committedAt: git(root, ["log", "-1", "--format=%cI"]) ?? "",
    builtAt: new Date().toISOString(),
    latestMigration: migrations.at(-1) ?? "",
  };
}

/** The `--define` arguments of a wrangler command. */
export function buildDefines(root: string): string[] {
  const info = buildInfo(root);
  const defines: Record<string, string> = {
    __BUILD_COMMIT__: info.commit,
    __BUILD_COMMITTED_AT__: info.committedAt,
    __BUILD_AT__: info.builtAt,
    __LATEST_MIGRATION__: info.latestMigration,
  };
  return Object.entries(defines).flatMap(([key, value]) => ["--define", `${key}:${JSON.stringify(value)}`]);
}
