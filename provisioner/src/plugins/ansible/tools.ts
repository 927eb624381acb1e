import { access, constants, readdir } from "node:fs/promises";
import { join } from "node:path";

/** The programs a play needs on the provisioner host. */
export interface AnsibleTools {
  /** Absolute path of `ansible-playbook`. */
  ansiblePlaybook: string;
  /**
   * nss_wrapper's preload library, or undefined. ssh refuses to run as a uid without a passwd entry, which a
   * sandbox's tenant user is; the play gives it one through nss_wrapper.
   */
  nssWrapper: string | undefined;
}

const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const LIBRARY_DIRS = ["/usr/lib", "/lib", "/usr/local/lib"];

/** `ansible-playbook` on `pathEnv` or in the system directories, and nss_wrapper; undefined without ansible-playbook. */
export async function findAnsibleTools(pathEnv: string | undefined): Promise<AnsibleTools | undefined> {
  const ansiblePlaybook = await findExecutable("ansible-playbook", `${pathEnv ?? ""}:${SYSTEM_PATH}`);
  if (!ansiblePlaybook) return undefined;
  return { ansiblePlaybook, nssWrapper: await findLibrary("libnss_wrapper.so") };
}

async function findExecutable(name: string, pathEnv: string): Promise<string | undefined> {
  for (const dir of pathEnv.split(":").filter((d) => d.startsWith("/"))) {
    if (await isAccessible(join(dir, name), constants.X_OK)) return join(dir, name);
  }
  return undefined;
}

/** A shared library in the system's library directories, multiarch ones (`/usr/lib/x86_64-linux-gnu`) first. */
async function findLibrary(name: string): Promise<string | undefined> {
  const multiarch: string[] = [];
  for (const base of LIBRARY_DIRS) {
    for (const entry of await readdir(base, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory() && entry.name.includes("-linux-")) multiarch.push(join(base, entry.name));
    }
  }
  for (const dir of [...multiarch, ...LIBRARY_DIRS]) {
    if (await isAccessible(join(dir, name), constants.R_OK)) return join(dir, name);
  }
  return undefined;
}

async function isAccessible(path: string, mode: number): Promise<boolean> {
  try {
    await access(path, mode);
    return true;
  } catch {
    return false;
  }
}

/** Why actions cannot run here. */
export const MISSING_ANSIBLE =
  "ansible: ansible-playbook is not installed on this provisioner host (Debian package ansible-core; " +
  "`node --import=tsx deploy/src/ensure-cli.ts ansible` installs it)\n";
