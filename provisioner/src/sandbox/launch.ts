import { accessSync, constants } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";

/**
 * How actions are isolated, from strongest to weakest (see `detectIsolation`):
 *
 * - `tenant-user`: the provisioner runs as root; every tenant's actions run as an unprivileged uid of their own
 *   (`TenantIds`), no capabilities, no new privileges, and when `namespace` in a private mount namespace.
 * - `user-namespace`: not root; actions run in an unprivileged user, mount and PID namespace, with every
 *   capability dropped, as the provisioner's own uid (so only what the namespace hides is protected).
 * - `unsandboxed`: not root and no user namespaces; actions run as the provisioner, and only one tenant may run
 *   any.
 */
export type Isolation =
  | { mode: "tenant-user"; namespace: boolean }
  | { mode: "user-namespace"; namespace: true }
  | { mode: "unsandboxed"; namespace: false };

export type SandboxMode = Isolation["mode"];

/** What one action sees in its mount namespace. */
export interface NamespaceView {
  /** The only directory of the work directory it sees (bound back in place). */
  tenantDir: string;
  /** The tenant's own temporary directory (in `tenantDir`), seen at `/tmp` and `/var/tmp` in a user namespace. */
  tmpDir: string;
  /** Where the action starts. */
  cwd: string;
  /** Directories (covered by an empty tmpfs) and files (covered by /dev/null) it must not see. */
  hidden: readonly string[];
}

/**
 * Where the sandbox finds its own tools, never through the action's PATH: that starts with the tenant's synced
 * scripts, and a script named `mount` or `setpriv` would otherwise run as root.
 */
const SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin";

/** Absolute path of a system tool (a missing one fails the spawn, so detection picks a weaker mode). */
function systemTool(name: string): string {
  for (const dir of SYSTEM_PATH.split(":")) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // next
    }
  }
  return join("/usr/bin", name);
}

/**
 * Runs in the new mount namespace, as root of it: keeps the tenant's directory (and temporary directory) open,
 * covers every hidden path, puts the tenant's temporary directory, when given, at `/tmp` and `/var/tmp` (nothing
 * an action writes there lands in the host's, and it goes with the tenant; where the tenant's directory itself
 * lies below one of them, as in tests, that one gets a fresh tmpfs instead), binds the tenant's directory back at
 * its own path (through the open descriptor: its path may be covered by then), and execs the rest of its
 * arguments (an absolute path) in the same process, so in the same process group, with the action's PATH back.
 * Arguments: tenant dir, temporary dir or "", cwd, number of hidden paths, the hidden paths, then the command.
 */
const SETUP_SCRIPT = `set -e
action_path=$PATH
PATH=${SYSTEM_PATH}
tenant_dir=$1 tmp_dir=$2 cwd=$3 n=$4
shift 4
exec 3<"$tenant_dir"
[ -z "$tmp_dir" ] || exec 4<"$tmp_dir"
while [ "$n" -gt 0 ]; do
  if [ -d "$1" ]; then mount -t tmpfs -o mode=0711,size=1m,nosuid,nodev corral-hidden "$1"
  elif [ -e "$1" ]; then mount --bind /dev/null "$1"
  fi
  n=$((n - 1))
  shift
done
for shared_tmp in /tmp /var/tmp; do
  [ -n "$tmp_dir" ] && [ -d "$shared_tmp" ] || continue
  case "$tenant_dir/" in
    "$shared_tmp"/*) mount -t tmpfs -o mode=1777,nosuid,nodev corral-tmp "$shared_tmp" ;;
    *) mount --no-canonicalize --bind /proc/self/fd/4 "$shared_tmp" ;;
  esac
done
mkdir -p "$tenant_dir"
mount --no-canonicalize --bind /proc/self/fd/3 "$tenant_dir"
exec 3<&- 4<&-
cd "$cwd"
umask 077
PATH=$action_path
exec "$@"`;

const UNSHARE_AS_ROOT = [systemTool("unshare"), "--mount", "--propagation", "private"];
/**
 * The PID namespace and its own /proc keep the action away from /proc/<provisioner>/root and .../environ, which
 * the same uid could otherwise read. The namespace's first process dies with `unshare`, and everything in the
 * namespace with it.
 */
const UNSHARE_AS_USER = [systemTool("unshare"), "--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation", "private"];

/** Becomes the tenant's user: no supplementary groups, no capabilities, no gain through setuid binaries. */
const becomeTenant = (id: number) => [systemTool("setpriv"), `--reuid=${id}`, `--regid=${id}`, "--clear-groups", "--no-new-privs", "--"];
/** Stays root of the user namespace without any capability, so the hiding mounts cannot be undone. */
const dropCapabilities = [systemTool("setpriv"), "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"];

/** How runShell starts an action: an argv put before `/bin/sh -c command`, or a uid/gid to spawn with. */
export interface Launch {
  launcher: readonly string[];
  uid?: number;
  gid?: number;
}

/**
 * The launch of one tenant's action under `isolation`; `id` is the tenant's uid and gid (tenant-user mode).
 *
 * Only in a user namespace does the action get the tenant's own `/tmp`: there every tenant is the same uid, so a
 * shared `/tmp` would be a way across. Tenant users keep the host's (their files in it are their own uid's, 0600
 * by the umask; what the harness and operators share with actions through it keeps working); what a tenant's
 * user leaves there goes when the tenant is removed (`LocalSandbox.removeTenants`).
 */
export function launchFor(isolation: Isolation, id: number | undefined, view: NamespaceView): Launch {
  const setup = (unshare: readonly string[], tmpDir: string) => [
    ...unshare,
    "/bin/sh",
    "-c",
    SETUP_SCRIPT,
    "corral-sandbox",
    view.tenantDir,
    tmpDir,
    view.cwd,
    String(view.hidden.length),
    ...view.hidden,
  ];
  switch (isolation.mode) {
    case "tenant-user":
      if (id === undefined) throw new TypeError("a tenant-user launch needs the tenant's id");
      return isolation.namespace ? { launcher: [...setup(UNSHARE_AS_ROOT, ""), ...becomeTenant(id)] } : { launcher: [], uid: id, gid: id };
    case "user-namespace":
      return { launcher: [...setup(UNSHARE_AS_USER, view.tmpDir), ...dropCapabilities] };
    case "unsandboxed":
      return { launcher: [] };
  }
}

/** Directories that hold what every program needs: never hidden, nor anything above them. */
const SYSTEM_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/usr", "/etc", "/dev", "/proc", "/sys", "/run", "/tmp", "/var/tmp"];

const isInside = (path: string, dir: string) => path === dir || path.startsWith(dir === sep ? dir : dir + sep);

/**
 * The paths to cover, from the work directory and the provisioner's private paths: absolute, without system
 * directories or their ancestors (covering `/` or `/usr` would leave no shell to run), and without a path inside
 * another one (covered with it).
 */
export function hiddenPaths(workDir: string, privatePaths: readonly string[]): string[] {
  const candidates = [workDir, ...privatePaths]
    .filter((p) => p.trim() !== "")
    .map((p) => resolve(p))
    .filter((p) => p !== dirname(p) && !SYSTEM_DIRS.some((system) => isInside(system, p)));
  const unique = [...new Set(candidates)].sort();
  return unique.filter((p) => !unique.some((other) => other !== p && isInside(p, other)));
}
