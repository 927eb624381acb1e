/**
 * From the cluster's services and candidate node layouts to the count problem the search solves: which
 * services are counted (have a quantity bound), their bounds, and which counted services each layout holds.
 * Impossibilities of a single bound are reported with their cause before any search.
 */
import { BadRequestError } from "@corral/contracts";
import type { NormalizedConstraints } from "./constraints.js";
import type { CountProblem } from "./count-search.js";
import { isConstrained, type CandidateLayout } from "./node-layouts.js";

/** Quantity bounds of the counted services, by counted index. */
export interface CountedBounds {
  names: string[];
  min: number[];
  max: number[];
}

/** A count problem with the service name of every counted index, for messages. */
export interface CountedProblem {
  counts: CountProblem;
  /** Service name per counted index. */
  names: string[];
}

/**
 * Counted services: requested constrained services with a quantity bound (min > 0 or a finite max), as in
 * Coopr's ClusterLayoutFinder, which only reads constraints of services on the cluster. `requireEvery` gives
 * every constrained service a min of at least 1.
 */
export function quantityBounds(
  services: readonly string[],
  constraints: NormalizedConstraints,
  requireEvery: boolean,
): CountedBounds {
  const names: string[] = [];
  const min: number[] = [];
  const max: number[] = [];
  for (const s of services) {
    const sc = constraints.services.get(s);
    let lo = sc?.min ?? 0;
    const hi = sc?.max ?? Infinity;
    if (requireEvery && isConstrained(s, constraints)) lo = Math.max(lo, 1);
    if (lo > 0 || hi < Infinity) {
      names.push(s);
      min.push(lo);
      max.push(hi);
    }
  }
  return { names, min, max };
}

/** The count problem of placing `machines` nodes over `layouts` (in preference order). */
export function countProblem(bounds: CountedBounds, layouts: readonly CandidateLayout[], machines: number): CountedProblem {
  const index = new Map(bounds.names.map((s, k) => [s, k]));
  const perLayout = layouts.map((l) => l.services.flatMap((s) => (index.has(s) ? [index.get(s) as number] : [])));
  return { counts: { n: machines, min: bounds.min, max: bounds.max, layouts: perLayout }, names: bounds.names };
}

const describeNodeCount = (count: number): string => `${count} node${count === 1 ? "" : "s"}`;

/**
 * Single-bound impossibilities, each a 400 with its cause: a min above its max, a min above the cluster size,
 * a min on a service that no node layout can hold (`unplaceable`: service -> reason).
 */
export function checkEachBound(problem: CountedProblem, unplaceable: ReadonlyMap<string, string>, machines: number): void {
  const { min, max } = problem.counts;
  problem.names.forEach((s, k) => {
    if (min[k]! > max[k]!) {
      throw new BadRequestError(`service ${s} must be on at least ${describeNodeCount(min[k]!)} but its quantities max is ${max[k]}`, {
        constraint: "quantities",
        service: s,
        min: min[k],
        max: max[k],
      });
    }
  });
  problem.names.forEach((s, k) => {
    if (min[k]! > machines) {
      throw new BadRequestError(`service ${s} must be on at least ${describeNodeCount(min[k]!)} but the cluster has ${machines}`, {
        constraint: "quantities",
        service: s,
        min: min[k],
        numMachines: machines,
      });
    }
  });
  problem.names.forEach((s, k) => {
    if (min[k]! > 0 && unplaceable.has(s)) {
      throw new BadRequestError(`service ${s} must be on at least ${describeNodeCount(min[k]!)}, but ${unplaceable.get(s)}`, {
        constraint: "quantities",
        service: s,
        min: min[k],
        reason: unplaceable.get(s),
      });
    }
  });
}

/** The 400 of a cluster (`forWhat`: " for new nodes" when growing) for which no node layout exists at all. */
export function noNodeLayoutError(unplaceable: ReadonlyMap<string, string>, forWhat = ""): BadRequestError {
  const reasons = [...unplaceable.values()];
  return new BadRequestError(`no node layout is possible${forWhat}: ${reasons.join("; ")}`, { constraint: "layout", reasons });
}
