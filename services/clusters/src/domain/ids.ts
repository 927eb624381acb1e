import { FIRST_NODENUM, nodeIdFor } from "@corral/solver";

/** Cluster ids are 8-digit zero-padded numbers (`00000001`); plans `<cluster>-<NNN>`; tasks `<plan>-<NNN>`. */
export const formatClusterId = (n: number) => String(n).padStart(8, "0");
export const formatPlanId = (clusterId: string, n: number) => `${clusterId}-${String(n).padStart(3, "0")}`;
/** Task ids count from 1 in stage order: global index i is task `<plan>-<i+1>`. */
export const formatTaskId = (planId: string, index: number) => `${planId}-${String(index + 1).padStart(3, "0")}`;

/** The global task index of a task id of `planId`, or undefined when it is not one. */
export function taskIndexOf(planId: string, taskId: string): number | undefined {
  if (!taskId.startsWith(planId + "-")) return undefined;
  const n = Number(taskId.slice(planId.length + 1));
  return Number.isInteger(n) && n >= 1 ? n - 1 : undefined;
}

/** Node ids of a cluster: the layout solver numbers nodes from FIRST_NODENUM with ids `nodeIdFor(...)`. */
export function nodeIdsOf(clusterId: string, numNodes: number): string[] {
  return Array.from({ length: numNodes }, (_, i) => nodeIdFor(clusterId, FIRST_NODENUM + i));
}

/**
 * How a cluster record numbers its nodes: from FIRST_NODENUM up to (not including) its next nodenum, less the
 * removed ones. A record that never grew or shrank has neither field: its nodes are the first `numNodes`.
 */
export interface NodeNumbering {
  id: string;
  numNodes: number;
  /** The nodenum the next new node gets; a removed node's nodenum is never given again. */
  nextNodenum?: number;
  /** Nodenums below `nextNodenum` whose nodes are gone. */
  removedNodenums?: readonly number[];
}

export const nextNodenumOf = (cluster: NodeNumbering): number => cluster.nextNodenum ?? FIRST_NODENUM + cluster.numNodes;

/** The ids of a cluster's nodes, in nodenum order. */
export function clusterNodeIds(cluster: NodeNumbering): string[] {
  if (cluster.nextNodenum === undefined) return nodeIdsOf(cluster.id, cluster.numNodes);
  const removed = new Set(cluster.removedNodenums);
  const ids: string[] = [];
  for (let n = FIRST_NODENUM; n < cluster.nextNodenum; n++) if (!removed.has(n)) ids.push(nodeIdFor(cluster.id, n));
  return ids;
}

/** The numbering of a cluster once the nodes of `nodenums` are gone; their ids are never given again. */
export function numberingWithout(cluster: NodeNumbering, nodenums: readonly number[]): Omit<NodeNumbering, "id"> {
  const current = new Set(clusterNodeIds(cluster));
  const gone = [...new Set(nodenums)].filter((n) => current.has(nodeIdFor(cluster.id, n)));
  return {
    numNodes: cluster.numNodes - gone.length,
    nextNodenum: nextNodenumOf(cluster),
    removedNodenums: [...(cluster.removedNodenums ?? []), ...gone].sort((a, b) => a - b),
  };
}
