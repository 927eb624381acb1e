import { lstat, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { sleep } from "@corral/shared";

/**
 * Where a tenant's user could leave files outside its directory: the host's shared temporary directories, which
 * an action sees when no mount namespace gives it its own (the uid-only fallback).
 */
export const SHARED_TMP_DIRS = ["/tmp", "/var/tmp", "/dev/shm"] as const;

/** Passes over /proc before giving up on processes that keep forking. */
const KILL_PASSES = 20;

/**
 * Kills every process running as one of `uids` (real, effective, saved or filesystem uid): what tenants' actions
 * left running in the background. Repeated until a pass finds none, as one may fork while another is killed.
 * Answers how many were killed.
 */
export async function killProcessesOf(uids: ReadonlySet<number>): Promise<number> {
  let killed = 0;
  if (uids.size === 0) return killed;
  for (let pass = 0; pass < KILL_PASSES; pass++) {
    const pids = await processesOf(uids);
    if (pids.length === 0) return killed;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
        killed++;
      } catch {
        // gone already
      }
    }
    await sleep(20);
  }
  throw new Error(`processes of uids ${[...uids].join(", ")} are still running after ${KILL_PASSES} rounds of SIGKILL`);
}

async function processesOf(uids: ReadonlySet<number>): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, "utf8").catch(() => "");
    const of = /^Uid:\s+(.*)$/m.exec(status)?.[1]?.split(/\s+/).map(Number) ?? [];
    if (of.some((uid) => uids.has(uid))) pids.push(Number(entry));
  }
  return pids;
}

/**
 * Removes whatever one of `uids` owns in `dirs`, at any depth (links not followed, other filesystems not
 * entered): a file or directory of theirs goes whole. One walk for all of them: it looks at every entry (about a
 * second for 36,000). Answers how many were removed.
 */
export async function removeEntriesOwnedBy(uids: ReadonlySet<number>, dirs: readonly string[] = SHARED_TMP_DIRS): Promise<number> {
  let removed = 0;
  if (uids.size === 0) return removed;
  const walk = async (dir: string, device: number): Promise<void> => {
    const entries = await readdir(dir).catch(() => [] as string[]);
    await Promise.all(
      entries.map(async (entry) => {
        const path = join(dir, entry);
        const s = await lstat(path).catch(() => undefined);
        if (!s || s.dev !== device) return;
        if (uids.has(s.uid)) {
          await rm(path, { recursive: true, force: true });
          removed++;
        } else if (s.isDirectory()) {
          await walk(path, device);
        }
      }),
    );
  };
  for (const dir of dirs) {
    const s = await lstat(dir).catch(() => undefined);
    if (s?.isDirectory()) await walk(dir, s.dev);
  }
  return removed;
}
