import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { launchFor, type Isolation } from "./launch.js";
import { SANDBOX_ID_BASE } from "./tenant-ids.js";

const run = promisify(execFile);

/**
 * The strongest isolation this process can give (see `Isolation`): as root, tenant users, in a mount namespace
 * when `unshare`, `mount` and `setpriv` work here (not in a container without CAP_SYS_ADMIN, for example); else
 * a user namespace when the kernel allows unprivileged ones; else none. Found by running a real sandboxed `true`
 * with a hidden directory, so a half-working setup is never chosen.
 */
export async function detectIsolation(): Promise<Isolation> {
  if (process.getuid?.() === 0) {
    return (await works({ mode: "tenant-user", namespace: true })) ? { mode: "tenant-user", namespace: true } : { mode: "tenant-user", namespace: false };
  }
  return (await works({ mode: "user-namespace", namespace: true })) ? { mode: "user-namespace", namespace: true } : { mode: "unsandboxed", namespace: false };
}

async function works(isolation: Isolation): Promise<boolean> {
  const root = await mkdtemp(join(tmpdir(), "corral-sandbox-probe-"));
  try {
    const tenantDir = join(root, "tenant");
    const tmpDir = join(tenantDir, "tmp");
    await mkdir(tmpDir, { recursive: true });
    const { launcher } = launchFor(isolation, SANDBOX_ID_BASE, { tenantDir, tmpDir, cwd: "/", hidden: [root] });
    const [file, ...args] = launcher;
    if (!file) return false;
    await run(file, [...args, "/bin/sh", "-c", "true"], { timeout: 10_000, env: { PATH: process.env["PATH"] ?? "/usr/sbin:/usr/bin:/sbin:/bin" } });
    return true;
  } catch {
    return false;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
