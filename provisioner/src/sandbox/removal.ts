import { chmod, lstat, readdir, rm, rmdir } from "node:fs/promises";
import { join } from "node:path";
import { pathSegment } from "../paths.js";

const PERMISSION_ERRORS = new Set(["EACCES", "EPERM"]);
const isCode = (err: unknown, ...codes: string[]) => codes.includes((err as NodeJS.ErrnoException).code ?? "");

/**
 * Removes `<root>/<segments...>` and everything in it, where a tenant's actions may have written, without ever
 * following a link: `rm` unlinks a link it meets instead of descending into it, and every directory between `root`
 * (trusted: the work directory) and the target must be a real directory, else nothing is removed (in a user
 * namespace a tenant's action can replace `nodes/` with a link; what is below a link is not the tenant's). Answers
 * whether something was removed. Idempotent.
 */
export async function removeBelow(root: string, segments: readonly string[]): Promise<boolean> {
  let path = root;
  for (const [i, segment] of segments.entries()) {
    path = join(path, segment);
    const found = await lstat(path).catch((err: unknown) => {
      if (isCode(err, "ENOENT", "ENOTDIR")) return undefined;
      throw err;
    });
    if (!found) return false;
    if (i < segments.length - 1 && !found.isDirectory()) return false;
  }
  await removeTree(path);
  return true;
}

/**
 * `rm -rf` that also empties directories a tenant made unwritable to their owner (`chmod 500`), which only matters
 * when the provisioner is not root (root is not stopped by modes): its own directories get `u+rwx` first.
 */
async function removeTree(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
  } catch (err) {
    if (!PERMISSION_ERRORS.has((err as NodeJS.ErrnoException).code ?? "")) throw err;
    await openToOwner(path);
    await rm(path, { recursive: true, force: true });
  }
}

async function openToOwner(path: string): Promise<void> {
  const s = await lstat(path).catch(() => undefined);
  if (!s?.isDirectory()) return;
  if (s.uid === process.getuid?.() && (s.mode & 0o700) !== 0o700) await chmod(path, (s.mode & 0o7777) | 0o700);
  for (const entry of await readdir(path)) await openToOwner(join(path, entry));
}

/** Removes a directory if it is empty (a link or anything else in its place is left alone). */
async function removeIfEmpty(path: string): Promise<void> {
  await rmdir(path).catch((err: unknown) => {
    if (!isCode(err, "ENOENT", "ENOTEMPTY", "EEXIST", "ENOTDIR")) throw err;
  });
}

/** Removes a node's directory `<workDir>/<tenant>/nodes/<clusterId>/<nodeId>`, and its cluster's once empty. */
export async function removeNodeDir(workDir: string, tenant: string, clusterId: string, nodeId: string): Promise<void> {
  const cluster = [pathSegment(tenant), "nodes", pathSegment(clusterId)];
  await removeBelow(workDir, [...cluster, pathSegment(nodeId)]);
  if ((await lstat(join(workDir, ...cluster.slice(0, 2))).catch(() => undefined))?.isDirectory()) {
    await removeIfEmpty(join(workDir, ...cluster));
  }
}
