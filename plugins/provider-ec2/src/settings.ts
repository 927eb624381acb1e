import type { Json, JsonObject, TaskMessage } from "@corral/provisioner/sdk";

/** A provider's fields as the `ec2` provider uses them (admin fields and the user's `key_name`). */
export interface Ec2Settings {
  region: string;
  endpoint?: string;
  /** Both or neither; neither means the AWS SDK's default credential chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  subnetId?: string;
  securityGroupIds: string[];
  sshUser: string;
  /** Undefined: the subnet decides. */
  associatePublicIp?: boolean;
  trustHostKeyOnFirstUse: boolean;
  /** The user's own key pair, let in beside the cluster's. */
  userKeyName?: string;
}

export type SettingsResult = { ok: true; settings: Ec2Settings } | { ok: false; error: string };

export const DEFAULT_SSH_USER = "admin";

const text = (value: Json | undefined) => (typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value).trim() : "");

/** A yes/no field: `true`/`false` (any case, also yes/no, 1/0); empty is undefined. */
function flag(fields: JsonObject, name: string): { ok: true; value: boolean | undefined } | { ok: false; error: string } {
  const raw = text(fields[name]).toLowerCase();
  if (raw === "") return { ok: true, value: undefined };
  if (["true", "yes", "1"].includes(raw)) return { ok: true, value: true };
  if (["false", "no", "0"].includes(raw)) return { ok: true, value: false };
  return { ok: false, error: `provider field ${name} is "${raw}"; give true or false` };
}

/** Reads and checks the provider fields of a task. Never puts a secret into an error message. */
export function readSettings(task: { config: Pick<TaskMessage["config"], "provider"> }): SettingsResult {
  const fields = task.config.provider?.provisioner ?? {};
  const region = text(fields["region"]);
  if (!region) return { ok: false, error: "provider field region is not set (for example us-east-1)" };
  const endpoint = text(fields["endpoint"]);
  if (endpoint && !/^https?:\/\/[^\s/]+/.test(endpoint)) return { ok: false, error: `provider field endpoint "${endpoint}" is not an http(s) URL` };
  const accessKeyId = text(fields["access_key_id"]);
  const secretAccessKey = text(fields["secret_access_key"]);
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    return { ok: false, error: "give both access_key_id and secret_access_key, or neither (the SDK's credential chain)" };
  }
  const associate = flag(fields, "associate_public_ip");
  if (!associate.ok) return associate;
  const trust = flag(fields, "trust_host_key_on_first_use");
  if (!trust.ok) return trust;
  const subnetId = text(fields["subnet_id"]);
  const userKeyName = text(fields["key_name"]);
  return {
    ok: true,
    settings: {
      region,
      ...(endpoint ? { endpoint } : {}),
      ...(accessKeyId ? { credentials: { accessKeyId, secretAccessKey } } : {}),
      ...(subnetId ? { subnetId } : {}),
      securityGroupIds: text(fields["security_group_ids"])
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
      sshUser: text(fields["ssh_user"]) || DEFAULT_SSH_USER,
      ...(associate.value !== undefined ? { associatePublicIp: associate.value } : {}),
      trustHostKeyOnFirstUse: trust.value ?? false,
      ...(userKeyName ? { userKeyName } : {}),
    },
  };
}

/** Who CREATE and CONFIRM log in as: the image type's `sshuser` (AMIs differ), else the provider's `ssh_user`. */
export function loginUser(task: Pick<TaskMessage, "config">, settings: Ec2Settings): string {
  return task.config.sshuser?.trim() || settings.sshUser;
}
