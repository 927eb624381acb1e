/**
 * The depth-first search of Coopr's `ClusterLayoutUpdater`: place the services one by one in Coopr's order,
 * each through its candidate placements (see count-vectors.ts), backtracking on a dead end with the pending
 * services restored. Remembers the deepest failure to explain "no placement" in the error.
 */
import { BadRequestError } from "@corral/contracts";
import type { Budget } from "../budget.js";
import { compareNodeLayouts, compareStrings, sortNames, type NormalizedConstraints } from "../constraints.js";
import { countVectors, type Slot } from "./count-vectors.js";
import { withServicePlaced, type GroupPick, type PlacementState, type ServicePlacement } from "./node-groups.js";
import { pendingOutlook } from "./pending-outlook.js";
import { placementOptions } from "./service-options.js";

/** Coopr's order: constrained services by max ascending, min descending, name; then the rest by name. */
export function placementOrder(services: readonly string[], constraints: NormalizedConstraints): string[] {
  const constrained = services.filter((s) => constraints.services.has(s));
  const free = services.filter((s) => !constraints.services.has(s));
  constrained.sort((a, b) => {
    const ca = constraints.services.get(a)!;
    const cb = constraints.services.get(b)!;
    if (ca.max !== cb.max) return ca.max < cb.max ? -1 : 1;
    if (ca.min !== cb.min) return cb.min - ca.min;
    return compareStrings(a, b);
  });
  return [...constrained, ...sortNames(free)];
}

interface DeepestFailure {
  depth: number;
  placed: string[];
  service: string;
  message: string;
}

export class PlacementSearch {
  private deepest: DeepestFailure | undefined;

  constructor(
    private readonly constraints: NormalizedConstraints,
    private readonly totalNodes: number,
    private readonly budget: Budget,
  ) {}

  /** Placements of `order[depth..]` in `state`, in order; null when there is none. */
  place(state: PlacementState, order: readonly string[], depth: number): ServicePlacement[] | null {
    if (depth === order.length) return [];
    const service = order[depth]!;
    const options = placementOptions(state, service, this.constraints, this.totalNodes);
    if (!options.ok) {
      this.noteFailure(depth, order, service, options.message);
      return null;
    }
    const { groups } = state;
    const slots: Slot[] = options.takingGroups
      .map((group, i) => ({ group, forced: options.forced[i]! }))
      .sort((a, b) => compareNodeLayouts(groups[a.group]!, groups[b.group]!));
    const presentAfter = new Set(state.present).add(service);
    const outlooks = order
      .slice(depth + 1)
      .map((pending) => pendingOutlook(groups, service, pending, presentAfter, this.constraints, this.totalNodes));
    const untouched = groups.map((_, g) => !slots.some((slot) => slot.group === g));
    for (let nodes = options.maxNodes; nodes >= options.minNodes; nodes--) {
      for (const taken of countVectors(groups, slots, untouched, outlooks, nodes, this.budget)) {
        const picks: GroupPick[] = [];
        taken.forEach((count, j) => {
          if (count > 0) picks.push({ key: groups[slots[j]!.group]!.key, count });
        });
        const rest = this.place(withServicePlaced(state, service, picks), order, depth + 1);
        if (rest !== null) return [{ service, picks }, ...rest];
      }
    }
    this.noteFailure(depth, order, service, `no placement of ${service} leaves room for ${order.slice(depth + 1).join(", ")}`);
    return null;
  }

  /** The error for a search that found no placement of `order`. */
  failure(order: readonly string[]): BadRequestError {
    const d = this.deepest;
    const detail =
      d === undefined
        ? ""
        : d.placed.length === 0
          ? `: ${d.message}`
          : `: after placing ${d.placed.join(", ")}, ${d.message}`;
    return new BadRequestError(`cannot add ${order.join(", ")} together${detail}`, {
      constraint: "layout",
      services: [...order],
      ...(d === undefined ? {} : { service: d.service, reason: d.message }),
    });
  }

  private noteFailure(depth: number, order: readonly string[], service: string, message: string): void {
    if (this.deepest === undefined || depth > this.deepest.depth) {
      this.deepest = { depth, placed: order.slice(0, depth), service, message };
    }
  }
}
