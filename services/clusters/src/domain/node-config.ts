/** Node records and config as the macros read them: what new nodes are stored as, and whose config they change. */
import type { Json, MacroNode, SolvedNode } from "@corral/contracts";
import { compileConfig, createMacroContext, expandConfig, nodeIdFor } from "@corral/solver";
import type { ClusterNode, ClusterRecord } from "./records.js";

export function macroNode(node: ClusterNode): MacroNode {
  return { id: node.id, nodenum: node.nodenum, services: node.services, properties: node.properties };
}

/** The stored form of a node the solver laid out: no results or actions yet. */
export function nodeRecordOf(clusterId: string, node: SolvedNode): ClusterNode {
  return {
    id: node.id,
    clusterId,
    nodenum: node.nodenum,
    services: node.services,
    properties: { ...node.properties },
    results: {},
    actions: [],
    applied: [],
  };
}

/**
 * The ids of `nodes` whose config, with macros expanded for the node, differs once `added` join the cluster (a
 * `%join(host.service.x,',')%` list grows, say). A config whose macros cannot be expanded changes nothing here:
 * its tasks fail at dispatch as they would without the new nodes.
 */
export function nodesWithChangedConfig(
  config: Json,
  owner: string,
  nodes: readonly ClusterNode[],
  added: readonly ClusterNode[],
): string[] {
  return changedConfigOf(config, owner, nodes, [...nodes, ...added]);
}

/** The ids of the nodes that remain once `removed` leave, whose expanded config differs then (as above). */
export function remainingWithChangedConfig(
  config: Json,
  owner: string,
  nodes: readonly ClusterNode[],
  removed: ReadonlySet<string>,
): string[] {
  return changedConfigOf(config, owner, nodes, nodes.filter((n) => !removed.has(n.id)));
}

/** The ids of the nodes that remain when `added` replace `removed`, whose expanded config differs then (as above). */
export function changedByReplacement(
  config: Json,
  owner: string,
  nodes: readonly ClusterNode[],
  removed: ReadonlySet<string>,
  added: readonly ClusterNode[],
): string[] {
  return changedConfigOf(config, owner, nodes, [...nodes.filter((n) => !removed.has(n.id)), ...added]);
}

/** The ids of the nodes in both lists whose config expands differently among `afterNodes` than among `beforeNodes`. */
function changedConfigOf(config: Json, owner: string, beforeNodes: readonly ClusterNode[], afterNodes: readonly ClusterNode[]): string[] {
  const compiled = compileConfig(config);
  const before = createMacroContext({ nodes: beforeNodes.map(macroNode), owner });
  const after = createMacroContext({ nodes: afterNodes.map(macroNode), owner });
  const beforeIds = new Set(beforeNodes.map((n) => n.id));
  const nodes = afterNodes.filter((n) => beforeIds.has(n.id));
  const expanded = (context: typeof before, id: string): string | undefined => {
    try {
      return JSON.stringify(expandConfig(compiled, context, id));
    } catch {
      return undefined;
    }
  };
  return nodes.filter((n) => expanded(before, n.id) !== expanded(after, n.id)).map((n) => n.id);
}

/**
 * The nodes a running removal (plan `planId`) takes off the cluster: the macros of the other nodes' tasks no longer
 * see them, so a CONFIGURE writes the peer list the cluster has once the plan ends.
 */
export function leavingNodeIds(cluster: Pick<ClusterRecord, "id" | "leavingNodes">, planId: string): ReadonlySet<string> {
  const leaving = cluster.leavingNodes;
  if (leaving?.planId !== planId) return new Set();
  return new Set(leaving.nodenums.map((n) => nodeIdFor(cluster.id, n)));
}
