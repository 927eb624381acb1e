import type { Json, TaskMessage } from "@corral/contracts";
import { HostListError, parseHostList, type HostEntry } from "@corral/shared";
import type { SshAuth } from "../../ssh/node-target.js";

/** The provider field holding the password, named in `ssh-auth` instead of the password itself. */
export const PASSWORD_FIELD = "ssh_password";

/** A hostpool provider's fields, read from a task. */
export interface HostpoolSettings {
  provider: string;
  hosts: HostEntry[];
  keyResource?: string;
  cleanup?: string;
}

export type SettingsResult = { ok: true; settings: HostpoolSettings } | { ok: false; error: string };

const text = (value: Json | undefined) => (typeof value === "string" || typeof value === "number" ? String(value).trim() : "");

/** Reads and checks the provider fields of a task: a readable, non-empty `hosts` and a credential. */
export function readSettings(task: TaskMessage): SettingsResult {
  const provider = task.config.provider?.name ?? "?";
  const fields = task.config.provider?.provisioner ?? {};
  const fail = (error: string): SettingsResult => ({ ok: false, error: `hostpool ${provider}: ${error}` });
  let hosts: HostEntry[];
  try {
    hosts = parseHostList(text(fields["hosts"]));
  } catch (err) {
    if (err instanceof HostListError) return fail(err.message);
    throw err;
  }
  if (!hosts.length) return fail("the provider field hosts lists no host");
  const keyResource = text(fields["ssh_key_resource"]);
  if (!keyResource && !text(fields[PASSWORD_FIELD])) return fail(`set ssh_key_resource or ${PASSWORD_FIELD}`);
  const cleanup = cleanupCommand(task);
  return {
    ok: true,
    settings: { provider, hosts, ...(keyResource ? { keyResource } : {}), ...(cleanup ? { cleanup } : {}) },
  };
}

/** The provider's `cleanup` command, if any; read on its own so DELETE runs it even when `hosts` went bad. */
export function cleanupCommand(task: TaskMessage): string | undefined {
  return text(task.config.provider?.provisioner?.["cleanup"]) || undefined;
}

/** How later tasks log in to a host: the entry's user, else the image's `sshuser`, else root; never a secret. */
export function sshAuthOf(entry: HostEntry, settings: HostpoolSettings, sshuser: string | undefined): SshAuth {
  return {
    user: entry.user ?? (sshuser || "root"),
    port: entry.port,
    ...(settings.keyResource ? { key_resource: settings.keyResource } : { password_field: PASSWORD_FIELD }),
  };
}
