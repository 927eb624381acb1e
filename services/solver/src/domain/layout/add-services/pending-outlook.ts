/**
 * What placing one service now means for a service still to be placed ("pending"): per node group, whether its
 * nodes can and must take the pending service, both without and with the service placed now. The count-vector
 * enumeration uses it to cut placements that leave a pending service no valid future.
 */
import type { NormalizedConstraints } from "../constraints.js";
import { forcingMustcoexist, whyNodeCannotTake } from "./node-fit.js";
import type { NodeGroup } from "./node-groups.js";

/** [without, with]: the group's nodes as they are, and with the service placed now added. */
export type ByVariant = readonly [boolean, boolean];

export interface PendingOutlook {
  /** Fewest nodes the pending service can go on (at least 1). */
  minNodes: number;
  /** Most nodes the pending service can go on. */
  maxNodes: number;
  /** Per group: its nodes can take the pending service. */
  canTake: ByVariant[];
  /** Per group: its nodes must take it (mustcoexist with a service they hold). */
  mustTake: ByVariant[];
}

/**
 * The outlook of `pending` when `placing` is placed now; `presentAfter` holds the cluster's services with
 * `placing` among them.
 */
export function pendingOutlook(
  groups: readonly NodeGroup[],
  placing: string,
  pending: string,
  presentAfter: ReadonlySet<string>,
  constraints: NormalizedConstraints,
  totalNodes: number,
): PendingOutlook {
  const canTake: ByVariant[] = [];
  const mustTake: ByVariant[] = [];
  for (const group of groups) {
    const withPlacing = {
      serviceSet: new Set(group.serviceSet).add(placing),
      hardwaretype: group.hardwaretype,
      imagetype: group.imagetype,
    };
    canTake.push([
      whyNodeCannotTake(group, pending, presentAfter, constraints) === undefined,
      whyNodeCannotTake(withPlacing, pending, presentAfter, constraints) === undefined,
    ]);
    mustTake.push([
      forcingMustcoexist(group.serviceSet, pending, presentAfter, constraints) !== undefined,
      forcingMustcoexist(withPlacing.serviceSet, pending, presentAfter, constraints) !== undefined,
    ]);
  }
  const sc = constraints.services.get(pending);
  return {
    minNodes: Math.max(sc?.min ?? 0, 1),
    maxNodes: Math.min(sc?.max ?? Infinity, totalNodes),
    canTake,
    mustTake,
  };
}
