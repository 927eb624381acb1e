/**
 * The cluster as the add-services search sees it: nodes grouped by node layout (hardware type, image type,
 * services), with how many nodes each group holds. Placing a service moves nodes from one group to another.
 */
import { nodeLayoutKey, sortNames } from "../constraints.js";
import type { ExistingNode } from "@corral/contracts";

/** The nodes of one node layout. */
export interface NodeGroup {
  /** {@link nodeLayoutKey} of the layout. */
  key: string;
  /** Sorted. */
  services: string[];
  serviceSet: ReadonlySet<string>;
  hardwaretype: string;
  imagetype: string;
  /** Nodes with this layout. */
  count: number;
}

export interface PlacementState {
  groups: NodeGroup[];
  /** Services on at least one node. */
  present: ReadonlySet<string>;
}

/** "Add the service to `count` nodes of the group with key `key`." */
export interface GroupPick {
  key: string;
  count: number;
}

/** Where one service goes: some nodes of some groups. */
export interface ServicePlacement {
  service: string;
  picks: GroupPick[];
}

function newGroup(services: string[], hardwaretype: string, imagetype: string, count: number): NodeGroup {
  return {
    key: nodeLayoutKey(hardwaretype, imagetype, services),
    services,
    serviceSet: new Set(services),
    hardwaretype,
    imagetype,
    count,
  };
}

/** Groups the nodes by node layout, groups in order of their first node. */
export function groupNodes(nodes: readonly ExistingNode[]): PlacementState {
  const groups = new Map<string, NodeGroup>();
  const present = new Set<string>();
  for (const node of nodes) {
    const services = sortNames([...new Set(node.services)]);
    for (const s of services) present.add(s);
    const key = nodeLayoutKey(node.hardwaretype, node.imagetype, services);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, newGroup(services, node.hardwaretype, node.imagetype, 1));
    else group.count++;
  }
  return { groups: [...groups.values()], present };
}

/** The state after adding `service` to the picked nodes (the input state is not modified). */
export function withServicePlaced(state: PlacementState, service: string, picks: readonly GroupPick[]): PlacementState {
  const byKey = new Map(state.groups.map((g) => [g.key, { ...g }]));
  for (const pick of picks) {
    const from = byKey.get(pick.key)!;
    from.count -= pick.count;
    const services = sortNames([...from.services, service]);
    const key = nodeLayoutKey(from.hardwaretype, from.imagetype, services);
    const to = byKey.get(key);
    if (to === undefined) byKey.set(key, newGroup(services, from.hardwaretype, from.imagetype, pick.count));
    else to.count += pick.count;
  }
  return {
    groups: [...byKey.values()].filter((g) => g.count > 0),
    present: new Set(state.present).add(service),
  };
}
