#!/usr/bin/env node
// Whether the compiled JavaScript (every workspace's dist/, written by deploy/src/build.ts) is there and as new as
// the TypeScript sources. Plain JavaScript: `npm start` and the systemd units ask before anything compiled can run.
// `node deploy/bin/build-check.mjs` prints the problem and exits 1 when a build is needed, else exits 0 silently.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The build's record, relative to the repository root: see {@link BuildStamp} in build-check.d.mts. */
export const STAMP_PATH = join("deploy", "dist", "build-stamp.json");

/**
 * The commit the checkout at `root` is on, read from `.git` without the git program (the systemd units run as a
 * user git may refuse, and the image has no git); null when there is no repository or it cannot be read.
 * @param {string} root
 * @returns {string | null}
 */
export function currentCommit(root) {
  try {
    let gitDir = join(root, ".git");
    if (statSync(gitDir).isFile()) {
      gitDir = resolve(root, readFileSync(gitDir, "utf8").trim().replace(/^gitdir:\s*/, ""));
    }
    const head = readFileSync(join(gitDir, "HEAD"), "utf8").trim();
    if (!head.startsWith("ref:")) return head;
    const ref = head.slice(4).trim();
    const commonDir = existsSync(join(gitDir, "commondir")) ? resolve(gitDir, readFileSync(join(gitDir, "commondir"), "utf8").trim()) : gitDir;
    for (const dir of [gitDir, commonDir]) {
      if (existsSync(join(dir, ref))) return readFileSync(join(dir, ref), "utf8").trim();
    }
    const packed = readFileSync(join(commonDir, "packed-refs"), "utf8").split("\n");
    return packed.find((line) => line.endsWith(` ${ref}`))?.split(" ")[0] ?? null;
  } catch {
    return null;
  }
}

/**
 * Why the compiled build at `root` cannot be used as it is, or undefined when it can: no build yet, an output
 * missing, another commit, or a source (file or directory, so an added or removed file counts) changed since the
 * build started.
 * @param {string} root
 * @returns {string | undefined}
 */
export function buildProblem(root) {
  /** @type {import("./build-check.d.mts").BuildStamp} */
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, STAMP_PATH), "utf8"));
  } catch {
    return "there is no compiled build yet";
  }
  const missing = stamp.outputs.find((output) => !existsSync(join(root, output)));
  if (missing) return `${missing} is missing`;
  const commit = currentCommit(root);
  if (commit && stamp.commit && commit !== stamp.commit) return `it was built at commit ${stamp.commit.slice(0, 12)}, the checkout is at ${commit.slice(0, 12)}`;
  for (const input of stamp.inputs) {
    const changed = newerThan(join(root, input), stamp.startedAt);
    if (changed) return `${changed.slice(root.length + 1)} changed after it was built`;
  }
  return undefined;
}

/**
 * The first file or directory under `path` (itself included) modified after `time`, or undefined.
 * @param {string} path
 * @param {number} time
 * @returns {string | undefined}
 */
function newerThan(path, time) {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return path;
  }
  if (stats.mtimeMs > time) return path;
  if (!stats.isDirectory()) return undefined;
  for (const name of readdirSync(path)) {
    const changed = newerThan(join(path, name), time);
    if (changed) return changed;
  }
  return undefined;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
  const problem = buildProblem(root);
  if (problem) {
    console.error(`[build-check] the compiled JavaScript in ${root} is not usable: ${problem}; run \`npm run build\` there`);
    process.exit(1);
  }
}
