import type { TaskMessage } from "../../sdk.js";
import { inventoryHost } from "./inventory.js";

/**
 * Who plays an action with `hosts: service`: the task of the step's first node (the leader) plays every node of the
 * step, by node id in nodenum order; the other tasks play nothing and say which task played them.
 */
export type StepPlay =
  | { role: "leader"; nodeIds: string[] }
  | { role: "played"; note: string }
  | { role: "refused"; error: string };

/**
 * The step of a `hosts: service` action: the nodes whose tasks in this task's stage run the same action of the same
 * service (`config.stepNodes`, which the clusters service adds to such tasks), ordered by `nodenum` (then id).
 */
export function stepPlay(task: TaskMessage): StepPlay {
  const { nodes, stepNodes } = task.config;
  if (!nodes) {
    return {
      role: "refused",
      error: "hosts: service plays every node of the service at once, and the tasks of a cluster this large do not carry its nodes (docs/providers.md, Ansible)",
    };
  }
  if (!stepNodes?.[task.nodeId]) {
    return { role: "refused", error: "hosts: service needs the nodes of the task's step (config.stepNodes), which this task does not carry" };
  }
  const ids = Object.keys(stepNodes);
  const unknown = ids.find((id) => !nodes[id]);
  if (unknown) return { role: "refused", error: `node ${unknown} of the step is not among the cluster's nodes` };
  ids.sort((a, b) => nodes[a]!.nodenum - nodes[b]!.nodenum || a.localeCompare(b));
  const leader = ids[0]!;
  if (leader === task.nodeId) return { role: "leader", nodeIds: ids };
  const names = ids.map((id) => inventoryHost(task, id));
  return {
    role: "played",
    note: `ansible: played by the task of node ${names[0]} (${leader}), which plays the ${ids.length} nodes of this step at once (hosts: service): ${names.join(", ")}\n`,
  };
}

/** A step node as the node of a task of its own: its address and hostname from the cluster's nodes, its reach as its results. */
export function stepNodeTask(task: TaskMessage, nodeId: string): TaskMessage {
  if (nodeId === task.nodeId) return task;
  const node = task.config.nodes?.[nodeId];
  return { ...task, nodeId, config: { ...task.config, ...node, results: { ...task.config.stepNodes?.[nodeId] } } };
}
