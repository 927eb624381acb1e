import { readFile } from "node:fs/promises";
import { HOSTPOOL_PROVIDER_TYPE } from "@corral/shared";
import type { HostKeys } from "../../ssh/host-keys.js";
import { sshKeyFile, type SshAuth } from "../../ssh/node-target.js";
import type { SshTarget } from "../../ssh/pool.js";
import type { PluginContext } from "../types.js";

export type HostTarget = { ok: true; target: SshTarget } | { ok: false; error: string };

/**
 * The SSH target of a pool host from the `ssh-auth` CREATE returned: the key of the synced `ssh_keys` resource
 * or the password in the provider field it names. (The automators' `nodeTarget` cannot serve here: before
 * CONFIRM the node has neither an address nor a pinned host key.)
 */
export async function hostTarget(ctx: PluginContext, address: string, auth: SshAuth, hostKeys?: HostKeys): Promise<HostTarget> {
  const target: SshTarget = { host: address, port: auth.port ?? 22, username: auth.user, ...(hostKeys ? { hostKeys } : {}) };
  if (auth.key_resource) {
    try {
      target.privateKey = await readFile(sshKeyFile(ctx.workDir, ctx.tenant, HOSTPOOL_PROVIDER_TYPE, auth.key_resource), "utf8");
    } catch {
      return {
        ok: false,
        error: `the ssh_keys resource ${auth.key_resource} of provider type ${HOSTPOOL_PROVIDER_TYPE} is not synced to this provisioner`,
      };
    }
  } else if (auth.password_field) {
    const password = ctx.task.config.provider?.provisioner?.[auth.password_field];
    if (typeof password !== "string" || password === "") return { ok: false, error: `provider field ${auth.password_field} is not set` };
    target.password = password;
  } else {
    return { ok: false, error: "ssh-auth names no key resource or password field" };
  }
  return { ok: true, target };
}
