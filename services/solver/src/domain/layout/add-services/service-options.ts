/**
 * For one service to add: which node groups can take it, which must (mustcoexist with a service they hold),
 * and how many nodes it may go on; or why it cannot be placed at all, as the message of the 400.
 */
import { describeNodes, type NormalizedConstraints } from "../constraints.js";
import { forcingMustcoexist, whyNodeCannotTake } from "./node-fit.js";
import type { NodeGroup, PlacementState } from "./node-groups.js";

export interface PlacementOptions {
  ok: true;
  /** Indexes into the state's groups of the groups that can take the service, in group order. */
  takingGroups: number[];
  /** Per entry of `takingGroups`: the group must take it on every node. */
  forced: boolean[];
  /** Fewest nodes the service can go on. */
  minNodes: number;
  /** Most nodes the service can go on. */
  maxNodes: number;
}

/** Why the service cannot be placed: the message and details of the BadRequestError. */
export interface PlacementRefusal {
  ok: false;
  message: string;
  details: Record<string, unknown>;
}

const describeGroup = (g: NodeGroup): string =>
  `${g.count} node${g.count === 1 ? "" : "s"} with [${g.services.join(", ")}]`;

const firstReasons = (reasons: readonly string[]): string =>
  `${reasons.slice(0, 5).join("; ")}${reasons.length > 5 ? "; ..." : ""}`;

/** Where `service` can go in `state`, a cluster of `totalNodes` nodes. */
export function placementOptions(
  state: PlacementState,
  service: string,
  constraints: NormalizedConstraints,
  totalNodes: number,
): PlacementOptions | PlacementRefusal {
  const takingGroups: number[] = [];
  const forced: boolean[] = [];
  const refusals: string[] = [];
  let forcedNodes = 0;
  let capacity = 0;
  for (let g = 0; g < state.groups.length; g++) {
    const group = state.groups[g]!;
    const problem = whyNodeCannotTake(group, service, state.present, constraints);
    const must = forcingMustcoexist(group.serviceSet, service, state.present, constraints);
    if (problem === undefined) {
      takingGroups.push(g);
      forced.push(must !== undefined);
      capacity += group.count;
      if (must !== undefined) forcedNodes += group.count;
      continue;
    }
    refusals.push(`${describeGroup(group)}: ${problem}`);
    if (must !== undefined) {
      const holders = must.filter((t) => t !== service && group.serviceSet.has(t));
      return {
        ok: false,
        message: `${service} must go on every node holding ${holders.join(", ")} (mustcoexist [${must.join(", ")}]), but ${describeGroup(group)} cannot take it: ${problem}`,
        details: { constraint: "mustcoexist", service, mustcoexist: must, reason: problem },
      };
    }
  }
  if (takingGroups.length === 0) {
    return {
      ok: false,
      message: `no node can take ${service}: ${firstReasons(refusals)}`,
      details: { constraint: "layout", service, reasons: refusals },
    };
  }
  const sc = constraints.services.get(service);
  const bounds = { min: sc?.min ?? 0, max: sc?.max ?? Infinity };
  const maxOrNull = bounds.max === Infinity ? null : bounds.max;
  const minNodes = Math.max(bounds.min, 1, forcedNodes);
  const maxNodes = Math.min(bounds.max, capacity, totalNodes);
  if (forcedNodes > bounds.max) {
    return {
      ok: false,
      message: `${service} must go on ${forcedNodes} nodes (mustcoexist with services already there), but must be on ${describeNodes(bounds)}`,
      details: { constraint: "quantities", service, forcedNodes, min: bounds.min, max: maxOrNull },
    };
  }
  if (minNodes > maxNodes) {
    return {
      ok: false,
      message:
        `${service} must be on ${describeNodes({ min: Math.max(bounds.min, 1), max: bounds.max })}, but only ${capacity} ` +
        `node${capacity === 1 ? "" : "s"} can take it` +
        (refusals.length > 0 ? ` (${firstReasons(refusals)})` : ""),
      details: { constraint: "quantities", service, min: bounds.min, max: maxOrNull, capacity, reasons: refusals },
    };
  }
  return { ok: true, takingGroups, forced, minNodes, maxNodes };
}
