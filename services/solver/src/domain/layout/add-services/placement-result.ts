/**
 * Turns the search's placements (counts per node group) into concrete nodes: within a node group, the lowest
 * nodenums take the service.
 */
import { nodeLayoutKey, sortNames } from "../constraints.js";
import type { AddServicesResult, ChangedNode, ExistingNode } from "@corral/contracts";
import type { ServicePlacement } from "./node-groups.js";

/**
 * The result of adding `toAdd` with `placements` to `nodes` (sorted by nodenum); `stats` as the search
 * reports them.
 */
export function placementResult(
  nodes: readonly ExistingNode[],
  clusterServices: readonly string[],
  toAdd: readonly string[],
  placements: readonly ServicePlacement[],
  stats: AddServicesResult["stats"],
): AddServicesResult {
  const services = nodes.map((n) => sortNames([...new Set(n.services)]));
  const groupMembers = new Map<string, number[]>(); // group key -> node indexes, ascending (nodes are sorted)
  nodes.forEach((n, i) => {
    const key = nodeLayoutKey(n.hardwaretype, n.imagetype, services[i]!);
    const members = groupMembers.get(key);
    if (members === undefined) groupMembers.set(key, [i]);
    else members.push(i);
  });
  const addedTo: string[][] = nodes.map(() => []);
  const receiversOf = new Map<string, number[]>();
  for (const placement of placements) {
    const receivers: number[] = [];
    for (const pick of placement.picks) {
      const members = groupMembers.get(pick.key)!;
      const taking = members.slice(0, pick.count);
      groupMembers.set(pick.key, members.slice(pick.count));
      for (const i of taking) {
        services[i] = sortNames([...services[i]!, placement.service]);
        addedTo[i]!.push(placement.service);
        receivers.push(i);
      }
      const first = nodes[taking[0]!]!;
      const key = nodeLayoutKey(first.hardwaretype, first.imagetype, services[taking[0]!]!);
      groupMembers.set(key, [...(groupMembers.get(key) ?? []), ...taking].sort((a, b) => a - b));
    }
    receiversOf.set(placement.service, receivers.sort((a, b) => a - b));
  }
  const changedNodes: ChangedNode[] = [];
  nodes.forEach((n, i) => {
    if (addedTo[i]!.length === 0) return;
    changedNodes.push({ id: n.id, nodenum: n.nodenum, addedServices: sortNames([...addedTo[i]!]), services: services[i]! });
  });
  return {
    services: [...clusterServices, ...toAdd],
    changedNodes,
    placements: toAdd.map((s) => ({ service: s, nodeIds: (receiversOf.get(s) ?? []).map((i) => nodes[i]!.id) })),
    stats,
  };
}
