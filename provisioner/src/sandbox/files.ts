import { chmod, lchown, lstat, mkdir, open, readdir, rm } from "node:fs/promises";
import { join } from "node:path";

/** Who owns a file: uid and gid. */
export interface Owner {
  uid: number;
  gid: number;
}

export const ROOT: Owner = { uid: 0, gid: 0 };

/**
 * Makes `path` a directory with exactly this owner and mode (its parent must exist). Refuses anything else in the
 * way, a symbolic link included, so a tenant can never make the provisioner chown or chmod another file. Only
 * called where the parent is not writable by a tenant, so nothing can be swapped in between.
 */
export async function ensureDir(path: string, owner: Owner, mode: number): Promise<void> {
  try {
    await mkdir(path, { mode });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const s = await lstat(path);
  if (!s.isDirectory()) throw new Error(`${path} is not a directory`);
  if (s.uid !== owner.uid || s.gid !== owner.gid) await lchown(path, owner.uid, owner.gid);
  if ((s.mode & 0o7777) !== mode) await chmod(path, mode);
}

/**
 * Gives a whole tree to `owner` (a node directory made before actions were sandboxed). Depth first: a directory
 * is handed over only after everything in it, so the new owner can never swap in a link below a directory still
 * being walked. Links themselves are re-owned, never followed.
 */
export async function giveTree(path: string, owner: Owner): Promise<void> {
  const s = await lstat(path);
  if (s.isDirectory()) {
    for (const entry of await readdir(path)) await giveTree(join(path, entry), owner);
  }
  if (s.uid !== owner.uid || s.gid !== owner.gid) await lchown(path, owner.uid, owner.gid);
}

/**
 * Lets group `gid` read a tree the provisioner owns (a staged resource version, before anyone else can see it):
 * every entry gets that group and the owner's read and execute bits as its group bits, never write, and loses
 * setuid and setgid (a tenant's archive must not carry a root-owned setuid program). Links get the group and are
 * not followed.
 */
export async function shareTreeWithGroup(path: string, gid: number): Promise<void> {
  const s = await lstat(path);
  await lchown(path, s.uid, gid);
  if (s.isSymbolicLink()) return;
  const mode = s.mode & 0o7777;
  await chmod(path, (mode & ~0o6070) | ((mode & 0o500) >> 3));
  if (s.isDirectory()) {
    for (const entry of await readdir(path)) await shareTreeWithGroup(join(path, entry), gid);
  }
}

/**
 * Writes a file for one action (mode 0600, then owned by `owner` when given) in a directory the tenant may write
 * to: the exclusive create never follows a link the tenant planted there; one found in the way is removed first.
 */
export async function writeActionFile(path: string, content: string, owner?: Owner): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let handle;
    try {
      handle = await open(path, "wx", 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw err;
      await rm(path, { force: true });
      continue;
    }
    try {
      if (owner) await handle.chown(owner.uid, owner.gid);
      await handle.writeFile(content);
      return;
    } finally {
      await handle.close();
    }
  }
}
