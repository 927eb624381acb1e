/**
 * An experimental variant of the node image, for time-to-active.ts: corral/node:bookworm whose entrypoint makes
 * only an Ed25519 host key instead of `ssh-keygen -A` (RSA 3072, ECDSA and Ed25519), with sshd told to load only
 * that key. The provisioner's SSH client negotiates Ed25519 and CONFIRM pins the presented key, so nothing else
 * changes. Built from the local image (no network), tagged corral/node:bench-ed25519, removed by the caller.
 */
import { execFile } from "node:child_process";
import { ensureDockerForTests } from "../../test/helpers/docker-hosts.js";

export const ED25519_VARIANT = "corral/node:bench-ed25519";

const DOCKERFILE = (base: string) => `FROM ${base}
RUN sed -i 's|^ssh-keygen -A$|ssh-keygen -q -t ed25519 -N "" -f /etc/ssh/ssh_host_ed25519_key|' /usr/local/sbin/corral-node-init \\
 && grep -q 'ssh_host_ed25519_key' /usr/local/sbin/corral-node-init \\
 && printf 'HostKey /etc/ssh/ssh_host_ed25519_key\\n' >> /etc/ssh/sshd_config.d/corral.conf
LABEL corral.bench.experiment=ed25519-host-key-only
`;

function docker(args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile("docker", args, { maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      err ? reject(new Error(`docker ${args.slice(0, 2).join(" ")}: ${stderr || err.message}`)) : resolve(stdout),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Builds the variant from the node image (built first when missing); answers its tag. */
export async function buildEd25519Variant(): Promise<string> {
  const base = await ensureDockerForTests();
  await docker(["build", "-q", "-t", ED25519_VARIANT, "-"], DOCKERFILE(base));
  return ED25519_VARIANT;
}

export async function removeVariant(tag: string): Promise<void> {
  await docker(["rmi", tag]).catch(() => "");
}
