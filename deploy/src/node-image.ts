import { spawn } from "node:child_process";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { BUILD_TIMEOUT_MS, slimRootfs, tuneSshSessions, withDebianRootfs } from "./debian-rootfs.js";
import { withDirLock } from "./dir-lock.js";
import { dockerRequest, ensureDocker, streamError } from "./docker.js";
import { defaultStateDir } from "./paths.js";

/** The image every Docker-backed test node runs: Debian with sshd as its entrypoint. */
export const NODE_IMAGE = "corral/node:bookworm";
/** Bumped whenever the build changes, so an image of an older build is rebuilt. */
const IMAGE_REVISION = "3";
const REVISION_LABEL = "corral.image.revision";

/** Options for {@link ensureNodeImage}. */
export interface NodeImageOptions {
  /** Receives progress lines. @default no output */
  log?: (line: string) => void;
  /** Rebuild even when the image exists. @default false */
  force?: boolean;
  /** Holds the build's temporary root file system, the lock and `dockerd.log`. @default `<repo>/.corral` or `CORRAL_DATA_DIR` */
  stateDir?: string;
}

const PACKAGES = ["openssh-server", "python3", "procps", "iproute2", "netcat-openbsd", "sudo", "ca-certificates", "tar", "gzip"];
const INIT_PATH = "/usr/local/sbin/corral-node-init";

/**
 * The container entrypoint. Host keys are made here, not in the image, so no two containers
 * share them; credentials come from the environment the container is started with.
 */
const INIT_SCRIPT = `#!/bin/sh
# corral/node entrypoint: per-container host keys, credentials from the environment, then sshd.
#   CORRAL_AUTHORIZED_KEYS    written to /root/.ssh/authorized_keys (and the user's, see below)
#   CORRAL_ROOT_PASSWORD      root's password
#   CORRAL_SSH_USER           a user with passwordless sudo, created at start
#   CORRAL_SSH_USER_PASSWORD  that user's password
set -eu

install_keys() { # home owner
  mkdir -p "$1/.ssh"
  printf '%s\\n' "$CORRAL_AUTHORIZED_KEYS" > "$1/.ssh/authorized_keys"
  chown -R "$2:" "$1/.ssh"
  chmod 700 "$1/.ssh"
  chmod 600 "$1/.ssh/authorized_keys"
}

mkdir -p /run/sshd
chmod 755 /run/sshd
# One Ed25519 host key, made at first start: RSA and ECDSA keys as well (ssh-keygen -A) cost up to a second of
# CPU per container, most of a docker node's time to active.
[ -f /etc/ssh/ssh_host_ed25519_key ] || ssh-keygen -q -t ed25519 -N "" -f /etc/ssh/ssh_host_ed25519_key

if [ -n "\${CORRAL_AUTHORIZED_KEYS:-}" ]; then
  install_keys /root root
fi
if [ -n "\${CORRAL_ROOT_PASSWORD:-}" ]; then
  printf 'root:%s\\n' "$CORRAL_ROOT_PASSWORD" | chpasswd
fi
if [ -n "\${CORRAL_SSH_USER:-}" ]; then
  user=$CORRAL_SSH_USER
  id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
  if [ -n "\${CORRAL_SSH_USER_PASSWORD:-}" ]; then
    printf '%s:%s\\n' "$user" "$CORRAL_SSH_USER_PASSWORD" | chpasswd
  else
    # "*" instead of useradd's "!": no password login, but the account is not locked for keys.
    usermod -p '*' "$user"
  fi
  if [ -n "\${CORRAL_AUTHORIZED_KEYS:-}" ]; then
    install_keys "$(getent passwd "$user" | cut -d: -f6)" "$user"
  fi
  printf '%s ALL=(ALL) NOPASSWD:ALL\\n' "$user" > /etc/sudoers.d/corral-ssh-user
  chmod 440 /etc/sudoers.d/corral-ssh-user
fi

exec /usr/sbin/sshd -D -e
`;

const SSHD_CONFIG = `# corral/node: many parallel sessions from the provisioner, logins by password or key.
PermitRootLogin yes
PasswordAuthentication yes
UseDNS no
HostKey /etc/ssh/ssh_host_ed25519_key
PrintMotd no
PrintLastLog no
MaxSessions 64
MaxStartups 200:30:400
ClientAliveInterval 15
`;

/**
 * Makes sure the Docker image {@link NODE_IMAGE} exists and returns its name: starts Docker when
 * needed ({@link ensureDocker}), and when the image is missing (or `force`), builds it from the
 * machine's own Debian mirror with debootstrap and imports the root file system. Concurrent
 * callers, in this or other processes, build once (a lock under `stateDir`).
 */
export async function ensureNodeImage(opts: NodeImageOptions = {}): Promise<string> {
  const log = opts.log ?? (() => {});
  const stateDir = opts.stateDir ?? defaultStateDir();
  await ensureDocker({ log, stateDir });
  if (!opts.force && (await imageRevision(NODE_IMAGE)) === IMAGE_REVISION) {
    return NODE_IMAGE;
  }
  const lock = join(stateDir, "locks", "node-image.lock");
  return withDirLock(
    lock,
    async () => {
      if (!opts.force && (await imageRevision(NODE_IMAGE)) === IMAGE_REVISION) {
        log(`${NODE_IMAGE} was built by another process meanwhile`);
        return NODE_IMAGE;
      }
      await buildNodeImage(stateDir, log);
      return NODE_IMAGE;
    },
    { timeoutMs: BUILD_TIMEOUT_MS, staleMs: BUILD_TIMEOUT_MS },
  );
}

async function buildNodeImage(stateDir: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  await withDebianRootfs({ packages: PACKAGES, stateDir, prefix: "node-image", log }, async (root, _work, source) => {
    log("configuring the root file system");
    await configureRootfs(root);
    log(`importing it as ${NODE_IMAGE}`);
    await importRootfs(root, source.suite);
  });
  const size = await imageSize(NODE_IMAGE);
  const seconds = Math.round((Date.now() - started) / 1000);
  log(`built ${NODE_IMAGE} (${size === undefined ? "size unknown" : `${Math.round(size / 1e6)} MB`}) in ${seconds} s`);
}

async function configureRootfs(root: string): Promise<void> {
  await slimRootfs(root);
  await writeFile(join(root, INIT_PATH), INIT_SCRIPT);
  await chmod(join(root, INIT_PATH), 0o755);
  const sshDir = join(root, "etc", "ssh");
  await mkdir(join(sshDir, "sshd_config.d"), { recursive: true });
  await writeFile(join(sshDir, "sshd_config.d", "corral.conf"), SSHD_CONFIG);
  await tuneSshSessions(root);
}

/** `tar -C root -c . | docker import`, through the Engine API (`POST /images/create?fromSrc=-`). */
async function importRootfs(root: string, suite: string): Promise<void> {
  const [repo, tag] = NODE_IMAGE.split(":") as [string, string];
  const query = new URLSearchParams({ fromSrc: "-", repo, tag });
  for (const change of [`CMD ["${INIT_PATH}"]`, "LABEL corral.image=node", `LABEL corral.suite=${suite}`, `LABEL ${REVISION_LABEL}=${IMAGE_REVISION}`]) {
    query.append("changes", change);
  }
  const tar = spawn("tar", ["--numeric-owner", "-C", root, "-c", "."], { stdio: ["ignore", "pipe", "pipe"] });
  let tarErrors = "";
  tar.stderr.setEncoding("utf8").on("data", (chunk: string) => (tarErrors += chunk));
  const tarExit = new Promise<number | null>((resolvePromise, reject) => {
    tar.once("error", reject);
    tar.once("close", resolvePromise);
  });
  const res = await dockerRequest("POST", `/images/create?${query.toString()}`, { body: tar.stdout, timeoutMs: 600_000 });
  const tarCode = await tarExit;
  if (tarCode !== 0) {
    throw new Error(`tar -C ${root} -c . failed (exit ${tarCode}): ${tarErrors.trim()}`);
  }
  const failure = res.status !== 200 ? res.body : streamError(res.body);
  if (failure !== undefined) {
    throw new Error(`docker import of ${NODE_IMAGE} failed (HTTP ${res.status}): ${failure.trim()}`);
  }
}

/** The image's size in bytes, or undefined when Docker does not have it. */
/** The image's build revision label, or undefined when the image is missing or older than labels. */
async function imageRevision(ref: string): Promise<string | undefined> {
  const res = await dockerRequest("GET", `/images/${ref}/json`);
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`docker image inspect ${ref} failed (HTTP ${res.status}): ${res.body.trim()}`);
  return (JSON.parse(res.body) as { Config?: { Labels?: Record<string, string> } }).Config?.Labels?.[REVISION_LABEL];
}

async function imageSize(ref: string): Promise<number | undefined> {
  const res = await dockerRequest("GET", `/images/${ref}/json`);
  if (res.status === 404) {
    return undefined;
  }
  if (res.status !== 200) {
    throw new Error(`docker image inspect ${ref} failed (HTTP ${res.status}): ${res.body.trim()}`);
  }
  return (JSON.parse(res.body) as { Size?: number }).Size ?? 0;
}
