/**
 * A live cluster as growing and shrinking read it: its nodes in nodenum order, its service list, and on how many
 * nodes each service is.
 */
import type { ExistingNode } from "@corral/contracts";
import { compareStrings } from "../constraints.js";

export interface ClusterState {
  /** Sorted by nodenum, then id. */
  nodes: ExistingNode[];
  /** The cluster's service list, with every service of a node added. */
  services: string[];
  /** Services on at least one node. */
  present: ReadonlySet<string>;
  /** Per service on a node, how many nodes hold it. */
  nodesWith: ReadonlyMap<string, number>;
}

export function clusterState(nodes: readonly ExistingNode[], clusterServices?: readonly string[]): ClusterState {
  const sorted = [...nodes].sort((a, b) => a.nodenum - b.nodenum || compareStrings(a.id, b.id));
  const nodesWith = new Map<string, number>();
  for (const node of sorted) {
    for (const s of new Set(node.services)) nodesWith.set(s, (nodesWith.get(s) ?? 0) + 1);
  }
  const services = [...new Set([...(clusterServices ?? []), ...nodesWith.keys()])];
  return { nodes: sorted, services, present: new Set(nodesWith.keys()), nodesWith };
}

/** How many nodes hold `service`. */
export const nodesHolding = (state: ClusterState, service: string): number => state.nodesWith.get(service) ?? 0;

/** "1 node", "3 nodes". */
export const nodeCount = (count: number): string => `${count} node${count === 1 ? "" : "s"}`;
