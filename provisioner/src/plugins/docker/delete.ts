import type { PluginContext, PluginOutcome } from "../types.js";
import { inspectIfExists, isNodeContainer, removeKeyOfEmptyCluster, type DockerDeps } from "./containers.js";
import { nodeFilter } from "./naming.js";
import { dockerSettings } from "./settings.js";

/**
 * DELETE: removes (force) the node's container, the one CREATE reported and any other labelled with the node;
 * succeeds when none is left. The cluster's key pair goes with its last container.
 */
export async function deleteNode(ctx: PluginContext, deps: DockerDeps, defaultSocket: string): Promise<PluginOutcome> {
  const { task, signal } = ctx;
  const settings = dockerSettings(task.config.provider?.provisioner ?? {}, defaultSocket);
  const docker = deps.client(settings.socketPath);

  const ids = new Set((await docker.listContainers(nodeFilter(deps.installation, task.tenant, task.nodeId), signal)).map((c) => c.Id));
  const providerId = task.config.results?.["providerid"];
  if (typeof providerId === "string" && providerId !== "" && !ids.has(providerId)) {
    const reported = await inspectIfExists(docker, providerId, signal);
    if (reported && isNodeContainer(reported, task)) ids.add(reported.Id);
  }
  const removed: string[] = [];
  for (const id of ids) if (await docker.removeContainer(id, signal)) removed.push(id.slice(0, 12));

  const keyRemoved = await removeKeyOfEmptyCluster(docker, deps.clusterKeys, deps.installation, task.tenant, task.clusterId, signal);
  ctx.log.info("docker: node container removed", { nodeId: task.nodeId, removed, keyRemoved });
  const what = removed.length ? `container ${removed.join(", ")} removed` : "no container left to remove";
  return { status: 0, stdout: `docker: node ${task.config.hostname}: ${what}${keyRemoved ? "; cluster key removed" : ""}\n` };
}
