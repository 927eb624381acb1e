import type { ClusterKeys, TaskMessage } from "@corral/provisioner/sdk";
import { isLxdStatus, LxdOperationError, type Instance, type LxdClient } from "./lxd-api.js";
import { isClusterInstance, isManaged, isNodeInstance } from "./naming.js";
import type { LxdSettings } from "./settings.js";

/** What the provider's operations share: one client per endpoint and project, the key pairs, the installation. */
export interface LxdDeps {
  client(settings: Pick<LxdSettings, "endpoint" | "project">): LxdClient;
  clusterKeys: ClusterKeys;
  /** This installation's id, in every instance's config and every lookup. */
  installation: string;
}

/** The instances of this installation's provider (of the client's project). */
export async function managedInstances(lxd: LxdClient, installation: string, signal?: AbortSignal): Promise<Instance[]> {
  return (await lxd.listInstances(signal)).filter((i) => isManaged(i, installation));
}

/**
 * The task node's instances: the one named `name` when it is the node's, and any other the provider made for the
 * node (normally none).
 */
export async function nodeInstances(lxd: LxdClient, deps: LxdDeps, task: TaskMessage, name: string, signal?: AbortSignal): Promise<Instance[]> {
  const all = await lxd.listInstances(signal);
  const mine = all.filter((i) => isNodeInstance(i, deps.installation, task));
  return [...mine.filter((i) => i.name === name), ...mine.filter((i) => i.name !== name)];
}

/**
 * Waits for the operations LXD is running on an instance (a creation a killed provisioner started, a start or
 * stop): LXD carries them on whoever asked, and a second action on the instance meanwhile would be refused.
 */
export async function settleInstance(lxd: LxdClient, name: string, signal?: AbortSignal): Promise<void> {
  const suffix = `/instances/${name}`;
  for (const op of await lxd.runningOperations(signal)) {
    const touches = Object.values(op.resources ?? {}).some((urls) => urls?.some((url) => url.split("?")[0]!.endsWith(suffix)));
    if (!touches) continue;
    try {
      await lxd.waitOperation(op, signal);
    } catch (err) {
      // Its failure is the caller's to find in the instance's state; only waiting mattered.
      if (!(err instanceof LxdOperationError)) throw err;
    }
  }
}

/**
 * Stops (forcibly) and deletes an instance. Returns false when it did not exist; one that disappears meanwhile
 * (a concurrent DELETE) counts as removed.
 */
export async function removeInstance(lxd: LxdClient, name: string, signal?: AbortSignal): Promise<boolean> {
  await settleInstance(lxd, name, signal);
  const instance = await lxd.getInstance(name, signal);
  if (!instance) return false;
  try {
    if (instance.status !== "Stopped") await lxd.waitOperation(await lxd.changeState(name, { action: "stop", force: true }, signal), signal);
    await lxd.waitOperation(await lxd.deleteInstance(name, signal), signal);
  } catch (err) {
    if (isLxdStatus(err, 404)) return true;
    if (err instanceof LxdOperationError && !(await lxd.getInstance(name, signal))) return true;
    throw err;
  }
  return true;
}

/**
 * Removes the cluster's key pair once none of its instances is left (the cluster's last DELETE, or the sweep after
 * removing orphans). Returns whether it did.
 */
export async function removeKeyOfEmptyCluster(
  lxd: LxdClient,
  deps: Pick<LxdDeps, "clusterKeys" | "installation">,
  tenant: string,
  clusterId: string,
  signal?: AbortSignal,
): Promise<boolean> {
  if ((await lxd.listInstances(signal)).some((i) => isClusterInstance(i, deps.installation, tenant, clusterId))) return false;
  await deps.clusterKeys.remove(tenant, clusterId);
  return true;
}
