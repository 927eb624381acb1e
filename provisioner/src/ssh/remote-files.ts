import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import type { Stats } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { RemoteNode } from "./remote-node.js";
import { remoteStatus, shellQuote } from "./remote-exec.js";

/** What one directory sync did. */
export interface SyncReport {
  sent: number;
  removed: number;
  unchanged: number;
}

export class RemoteSyncError extends Error {
  override readonly name = "RemoteSyncError";
}

const STEP_TIMEOUT_MS = 300_000;

/** A local directory and the node's directory that is to hold exactly its files. */
export interface DirectoryPair {
  localDir: string;
  remoteDir: string;
}

/**
 * Makes `remoteDir` on the node hold exactly the files of `localDir` (symlinks followed, as synced plugin
 * resources are links to versions): the node's files are checksummed there (`sha256sum`), only files whose
 * checksum differs are sent (one gzipped tar over the connection), files no longer present locally are removed.
 * Idempotent; a missing local directory empties the remote one.
 */
export async function syncDirectory(node: RemoteNode, localDir: string, remoteDir: string, signal: AbortSignal): Promise<SyncReport> {
  const [report] = await syncDirectories(node, [{ localDir, remoteDir }], signal);
  return report!;
}

/**
 * `syncDirectory` for several directories, with one command listing all of them (after `prelude`, a command that
 * must succeed first): a node's BOOTSTRAP costs one exec channel and three processes when nothing changed, not a
 * channel per directory.
 * Reports in the order of `pairs`.
 */
export async function syncDirectories(node: RemoteNode, pairs: readonly DirectoryPair[], signal: AbortSignal, prelude?: string): Promise<SyncReport[]> {
  const [locals, remotes] = await Promise.all([Promise.all(pairs.map((p) => localChecksums(p.localDir))), remoteChecksums(node, pairs, signal, prelude)]);
  const reports: SyncReport[] = [];
  for (const [i, { localDir, remoteDir }] of pairs.entries()) {
    const local = locals[i]!;
    const remote = remotes[i]!;
    const changed = [...local].filter(([path, sum]) => remote.get(path) !== sum).map(([path]) => path);
    const gone = [...remote.keys()].filter((path) => !local.has(path));
    if (changed.length) await sendFiles(node, localDir, changed, remoteDir, signal);
    if (gone.length) {
      await runChecked(
        node,
        `cd ${shellQuote(remoteDir)} && rm -f -- ${gone.map(shellQuote).join(" ")} && find . -mindepth 1 -type d -empty -delete`,
        signal,
        `removing ${gone.length} files from ${remoteDir}`,
      );
    }
    reports.push({ sent: changed.length, removed: gone.length, unchanged: local.size - changed.length });
  }
  return reports;
}

/** Relative path -> sha256 of every regular file under `dir` (following symlinks); empty when `dir` is missing. */
export async function localChecksums(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (rel: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(join(dir, rel));
    } catch {
      return;
    }
    for (const name of names.sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const info = await stat(join(dir, path)).catch(() => undefined);
      if (!info) continue;
      if (info.isDirectory()) await walk(path);
      else if (info.isFile()) out.set(path, await cachedSha256(join(dir, path), info));
    }
  };
  await walk("");
  return out;
}

/**
 * Checksums by file identity and version (device, inode, size, modification time): every node's BOOTSTRAP compares
 * the same synced files, which are hashed once, not once per node.
 */
const checksums = new Map<string, string>();
const MAX_CACHED_CHECKSUMS = 10_000;

async function cachedSha256(file: string, info: Stats): Promise<string> {
  const key = `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
  const known = checksums.get(key);
  if (known) return known;
  const sum = await sha256File(file);
  if (checksums.size >= MAX_CACHED_CHECKSUMS) checksums.clear();
  checksums.set(key, sum);
  return sum;
}

function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(file)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}

/**
 * Per directory, relative path -> sha256 of its files on the node (each directory is made when missing), from one
 * `find` over all of them: its lines name absolute paths, each under one of the directories.
 */
async function remoteChecksums(node: RemoteNode, pairs: readonly DirectoryPair[], signal: AbortSignal, prelude?: string): Promise<Array<Map<string, string>>> {
  const sums = pairs.map(() => new Map<string, string>());
  const dirs = pairs.map((p) => shellQuote(p.remoteDir)).join(" ");
  const commands = [...(prelude ? [prelude] : []), ...(pairs.length ? [`mkdir -p ${dirs} && find ${dirs} -type f -exec sha256sum -- {} +`] : [])];
  if (!commands.length) return sums;
  const what = [prelude ? "preparing the node" : "", pairs.length ? `listing ${pairs.map((p) => p.remoteDir).join(", ")}` : ""].filter(Boolean).join(" and ");
  const out = await runChecked(node, commands.join(" && "), signal, what, 1 << 22);
  // `find` prints each path under the directory as given; the longest directory a path is under is its own (one
  // directory may hold another).
  const prefixes = pairs.map((p) => `${p.remoteDir.replace(/\/+$/, "")}/`);
  const byLength = [...prefixes.entries()].sort(([, a], [, b]) => b.length - a.length);
  for (const line of out.split("\n")) {
    // `<64 hex>  <path>`; names sha256sum had to escape (a leading backslash) are left out: they are resent.
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
    if (!m) continue;
    const path = m[2]!;
    const owner = byLength.find(([, prefix]) => path.startsWith(prefix));
    if (owner) sums[owner[0]]!.set(path.slice(owner[1].length), m[1]!);
  }
  return sums;
}

async function sendFiles(node: RemoteNode, localDir: string, paths: string[], remoteDir: string, signal: AbortSignal): Promise<void> {
  const tar = spawn("tar", ["-C", localDir, "-czhf", "-", "--null", "-T", "-"], { stdio: ["pipe", "pipe", "pipe"] });
  // Read at once: a child's stdout left unread until the channel opens was seen to lose a quick tar's output.
  const archive = tar.stdout.pipe(new PassThrough());
  let tarError = "";
  tar.stderr.on("data", (c: Buffer) => (tarError += c.toString()));
  tar.stdin.end(paths.map((p) => `${p}\0`).join(""));
  const tarDone = new Promise<number>((resolve) => tar.once("close", (code) => resolve(code ?? 1)));
  const outcome = await node.run({
    command: `mkdir -p ${shellQuote(remoteDir)} && tar -xzf - -C ${shellQuote(remoteDir)} --no-same-owner`,
    input: archive,
    timeoutMs: STEP_TIMEOUT_MS,
    signal,
  });
  const tarCode = await tarDone;
  if (tarCode !== 0) throw new RemoteSyncError(`packing ${paths.length} files of ${localDir} failed: ${tarError.trim()}`);
  const { status, note } = remoteStatus(outcome, `unpacking into ${remoteDir}`, STEP_TIMEOUT_MS / 1000);
  if (status !== 0) throw new RemoteSyncError(`unpacking into ${remoteDir} failed (${status}): ${note}${outcome.stderr.text()}`);
}

/** Runs a command that must succeed; returns its stdout (up to `keepBytes`). */
export async function runChecked(node: RemoteNode, command: string, signal: AbortSignal, what: string, keepBytes?: number): Promise<string> {
  const outcome = await node.run({ command, timeoutMs: STEP_TIMEOUT_MS, signal, ...(keepBytes ? { keepBytes } : {}) });
  const { status, note } = remoteStatus(outcome, what, STEP_TIMEOUT_MS / 1000);
  if (status !== 0) throw new RemoteSyncError(`${what} failed (${status}): ${note}${outcome.stderr.text()}`);
  return outcome.stdout.text(keepBytes);
}
