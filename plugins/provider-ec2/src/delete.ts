import type { PluginContext, PluginOutcome } from "@corral/provisioner/sdk";
import type { Ec2Deps } from "./deps.js";
import { isEc2Code, LIVE_STATES, type Ec2Api } from "./ec2-api.js";
import { liveNodeInstances, reportedInstance } from "./instances.js";
import { removeKeyPairOfEmptyCluster } from "./key-pairs.js";
import { readSettings } from "./settings.js";

/**
 * DELETE: terminates the node's instances (the one CREATE reported and any other live one tagged with the node);
 * succeeds when none is left, also when they were gone already. The cluster's key pair goes with its last live
 * instance.
 */
export async function deleteNode(ctx: PluginContext, deps: Ec2Deps): Promise<PluginOutcome> {
  const { task, signal } = ctx;
  const read = readSettings(task);
  if (!read.ok) return { status: 1, stderr: `ec2: ${read.error}\n` };
  const api = deps.api(read.settings);

  const ids = new Set((await liveNodeInstances(api, deps.installation, task, signal)).map((i) => i.id));
  const reported = await reportedInstance(api, deps.installation, task, signal);
  if (reported && (LIVE_STATES as readonly string[]).includes(reported.state)) ids.add(reported.id);
  const terminated = await terminate(api, [...ids], signal);

  const keyRemoved = await removeKeyPairOfEmptyCluster(api, deps.clusterKeys, deps.installation, task.tenant, task.clusterId, signal);
  ctx.log.info("ec2: node instance terminated", { nodeId: task.nodeId, terminated, keyRemoved });
  const what = terminated.length ? `instance ${terminated.join(", ")} terminating` : "no instance left to terminate";
  return { status: 0, stdout: `ec2: node ${task.config.hostname}: ${what}${keyRemoved ? "; the cluster's key pair removed" : ""}\n` };
}

/** TerminateInstances; an instance EC2 no longer knows is gone already. Answers `id (previous state)` of each. */
async function terminate(api: Ec2Api, ids: string[], signal: AbortSignal): Promise<string[]> {
  if (!ids.length) return [];
  try {
    return (await api.terminateInstances(ids, signal)).map((c) => `${c.InstanceId} (was ${c.PreviousState?.Name ?? "?"})`);
  } catch (err) {
    if (!isEc2Code(err, "InvalidInstanceID.NotFound") || ids.length === 1) {
      if (isEc2Code(err, "InvalidInstanceID.NotFound")) return [];
      throw err;
    }
  }
  // One unknown id fails the whole call: the others are terminated one by one.
  const out: string[] = [];
  for (const id of ids) out.push(...(await terminate(api, [id], signal)));
  return out;
}
