import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** Options for {@link withDirLock}. */
export interface DirLockOptions {
  /** A lock older than this is taken over even when its owner looks alive. @default 900_000 ms */
  staleMs?: number;
  /** Give up waiting for the lock after this long. @default 900_000 ms */
  timeoutMs?: number;
  /** How often to retry while another process holds the lock. @default 250 ms */
  pollMs?: number;
}

interface LockOwner {
  pid: number;
  host: string;
  at: number;
}

const OWNER_FILE = "owner.json";

/**
 * Runs `fn` while holding an exclusive lock across processes: the lock is the directory
 * `lockDir`, created with a non-recursive `mkdir` (atomic). A lock whose owner process is gone
 * (same host) or that is older than `staleMs` is taken over.
 */
export async function withDirLock<T>(lockDir: string, fn: () => Promise<T>, opts: DirLockOptions = {}): Promise<T> {
  const staleMs = opts.staleMs ?? 900_000;
  const deadline = Date.now() + (opts.timeoutMs ?? 900_000);
  await mkdir(dirname(lockDir), { recursive: true });
  for (;;) {
    if (await tryAcquire(lockDir)) {
      break;
    }
    if (await isStale(lockDir, staleMs)) {
      await breakLock(lockDir);
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for lock ${lockDir}; remove it if no other process is installing`);
    }
    await sleep(opts.pollMs ?? 250);
  }
  try {
    return await fn();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

async function tryAcquire(lockDir: string): Promise<boolean> {
  try {
    await mkdir(lockDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") {
      return false;
    }
    throw err;
  }
  const owner: LockOwner = { pid: process.pid, host: hostname(), at: Date.now() };
  await writeFile(join(lockDir, OWNER_FILE), JSON.stringify(owner));
  return true;
}

async function isStale(lockDir: string, staleMs: number): Promise<boolean> {
  let createdAt: number;
  try {
    createdAt = (await stat(lockDir)).mtimeMs;
  } catch {
    return false; // released meanwhile; the next mkdir decides
  }
  if (Date.now() - createdAt > staleMs) {
    return true;
  }
  const owner = await readOwner(lockDir);
  if (!owner) {
    // The owner may be between mkdir and writing its file; give it a few seconds.
    return Date.now() - createdAt > 5_000;
  }
  return owner.host === hostname() && !isAlive(owner.pid);
}

async function readOwner(lockDir: string): Promise<LockOwner | undefined> {
  try {
    return JSON.parse(await readFile(join(lockDir, OWNER_FILE), "utf8")) as LockOwner;
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists (one of another user counts). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Renames before removing so two processes breaking the same stale lock cannot both succeed. */
async function breakLock(lockDir: string): Promise<void> {
  const aside = `${lockDir}.stale-${process.pid}-${Date.now()}`;
  try {
    await rename(lockDir, aside);
  } catch {
    return; // someone else broke or released it
  }
  await rm(aside, { recursive: true, force: true });
}
