import { createHash } from "node:crypto";
import type { TaskMessage } from "@corral/provisioner/sdk";
import type { Instance } from "./lxd-api.js";

/** Config keys on every instance the provider makes; they are how it finds its instances again. */
export const CONFIG = {
  tenant: "user.corral.tenant",
  cluster: "user.corral.cluster",
  node: "user.corral.node",
  managed: "user.corral.managed",
  /** The Corral installation the instance belongs to. */
  installation: "user.corral.installation",
} as const;

/** Value of `user.corral.managed`: the sweep only ever touches instances carrying it. */
export const MANAGED_BY = "lxd-provider";

type NodeKeys = Pick<TaskMessage, "tenant" | "clusterId" | "nodeId">;

export function nodeConfig(installation: string, task: NodeKeys): Record<string, string> {
  return {
    [CONFIG.installation]: installation,
    [CONFIG.tenant]: task.tenant,
    [CONFIG.cluster]: task.clusterId,
    [CONFIG.node]: task.nodeId,
    [CONFIG.managed]: MANAGED_BY,
  };
}

/** Whether this installation's provider made the instance. */
export function isManaged(instance: Instance, installation: string): boolean {
  const config = instance.config ?? {};
  return config[CONFIG.managed] === MANAGED_BY && config[CONFIG.installation] === installation;
}

/** Whether the instance was made by this installation's provider for the task's node. */
export function isNodeInstance(instance: Instance, installation: string, task: Pick<TaskMessage, "tenant" | "nodeId">): boolean {
  const config = instance.config ?? {};
  return isManaged(instance, installation) && config[CONFIG.tenant] === task.tenant && config[CONFIG.node] === task.nodeId;
}

export function isClusterInstance(instance: Instance, installation: string, tenant: string, clusterId: string): boolean {
  const config = instance.config ?? {};
  return isManaged(instance, installation) && config[CONFIG.tenant] === tenant && config[CONFIG.cluster] === clusterId;
}

const MAX_NAME = 63;
const HASH_CHARS = 8;

/**
 * `corral-<first label of the node's hostname>-<hash>`: a valid LXD instance name (a DNS label: letters, digits and
 * hyphens, at most 63 characters, starting with a letter), readable, and unique because the hash covers the
 * installation, tenant, cluster and node number. Stable, so a redelivered CREATE meets its earlier instance under
 * the same name.
 */
export function instanceName(installation: string, task: Pick<TaskMessage, "tenant" | "clusterId">, nodenum: number, hostname: string): string {
  const hash = createHash("sha256").update(`${installation}\0${task.tenant}\0${task.clusterId}\0${nodenum}`).digest("hex").slice(0, HASH_CHARS);
  const label = (hostname.split(".")[0] || `${task.clusterId}-${nodenum}`)
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "");
  const room = MAX_NAME - "corral-".length - 1 - HASH_CHARS;
  const part = label.slice(0, room).replace(/-$/, "");
  return part ? `corral-${part}-${hash}` : `corral-${hash}`;
}
