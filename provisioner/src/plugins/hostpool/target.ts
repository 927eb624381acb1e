import type { HostKeys } from "../../ssh/host-keys.js";
import { sshCredential, type SshAuth } from "../../ssh/node-target.js";
import type { SshTarget } from "../../ssh/pool.js";
import type { PluginContext } from "../types.js";

export type HostTarget = { ok: true; target: SshTarget } | { ok: false; error: string };

/**
 * The SSH target of a pool host from the `ssh-auth` CREATE returned, at the host's listed address (the
 * automators' `nodeTarget` cannot serve here: before CONFIRM the node has neither an address nor a pinned host
 * key); the credential is resolved as for every node (`sshCredential`).
 */
export async function hostTarget(ctx: PluginContext, address: string, auth: SshAuth, hostKeys?: HostKeys): Promise<HostTarget> {
  const credential = await sshCredential(ctx.task, auth, { workDir: ctx.workDir, clusterKeys: undefined });
  if (!credential.ok) return credential;
  const target: SshTarget = { host: address, port: auth.port ?? 22, username: auth.user, ...credential.credential };
  return { ok: true, target: hostKeys ? { ...target, hostKeys } : target };
}
