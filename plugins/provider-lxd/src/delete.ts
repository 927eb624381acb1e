import type { PluginContext, PluginOutcome } from "@corral/provisioner/sdk";
import { nodeInstances, removeInstance, removeKeyOfEmptyCluster, type LxdDeps } from "./instances.js";
import { instanceName } from "./naming.js";
import { lxdSettings } from "./settings.js";

/**
 * DELETE: stops and deletes the node's instance (the one CREATE reported and any other made for the node); succeeds
 * when none is left, so a redelivered DELETE is a success too. The cluster's key pair goes with its last instance.
 */
export async function deleteNode(ctx: PluginContext, deps: LxdDeps, defaultSocket: string): Promise<PluginOutcome> {
  const { task, signal } = ctx;
  const parsed = lxdSettings(task.config.provider?.provisioner ?? {}, defaultSocket);
  if (!parsed.ok) return { status: 1, stderr: `lxd: ${parsed.error}\n` };
  const lxd = deps.client(parsed.settings);
  const reported = task.config.results?.["providerid"];
  const name = typeof reported === "string" && reported !== "" ? reported : instanceName(deps.installation, task, task.config.nodenum, task.config.hostname);

  const removed: string[] = [];
  for (const instance of await nodeInstances(lxd, deps, task, name, signal)) {
    if (await removeInstance(lxd, instance.name, signal)) removed.push(instance.name);
  }
  const keyRemoved = await removeKeyOfEmptyCluster(lxd, deps, task.tenant, task.clusterId, signal);
  ctx.log.info("lxd: node instance removed", { nodeId: task.nodeId, removed, keyRemoved });
  const what = removed.length ? `instance ${removed.join(", ")} removed` : "no instance left to remove";
  return { status: 0, stdout: `lxd: node ${task.config.hostname}: ${what}${keyRemoved ? "; cluster key removed" : ""}\n` };
}
