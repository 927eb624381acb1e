/**
 * New nodes' layouts chosen by the solver: the create's search on what is left of each quantity bound.
 *
 * The candidates are the node layouts a create of this cluster would choose from (same services, constraints and
 * usable types, in the same preference order); each counted service's bounds become the nodes it may still gain,
 * `max - on` at most and `min - on` at least, and the search takes the lexicographically greatest count vector of
 * `k` new nodes over the candidates. When the create's layout for the larger size holds the existing nodes, this
 * is exactly that layout minus the existing nodes: any better vector of new nodes, added to the existing ones,
 * would be a better layout for the larger size.
 */
import { BadRequestError } from "@corral/contracts";
import type { Budget } from "../budget.js";
import { describeNodes, type NormalizedConstraints } from "../constraints.js";
import { countProblem, noNodeLayoutError, type CountedBounds, type CountedProblem } from "../count-problem.js";
import { searchCounts } from "../count-search.js";
import { conflictHints } from "../infeasibility/infeasible-error.js";
import { minimalConflict } from "../infeasibility/minimal-conflict.js";
import type { QuantityBound } from "../infeasibility/lp-conflict.js";
import { generateNodeLayouts, type CandidateLayout } from "../node-layouts.js";
import { nodeCount, nodesHolding, type ClusterState } from "./cluster-state.js";
import type { CheckedGrow } from "./grow-checks.js";

/** Node layouts with how many new nodes get each (in preference order). */
export interface NewLayouts {
  layouts: CandidateLayout[];
  counts: number[];
}

/**
 * The counted services (a min above 0 or a finite max, as in a create) among `services`, with the bounds left
 * for new nodes: how many more nodes each must and may be on.
 */
export function residualBounds(services: readonly string[], state: ClusterState, constraints: NormalizedConstraints): CountedBounds {
  const bounds: CountedBounds = { names: [], min: [], max: [] };
  for (const s of services) {
    const sc = constraints.services.get(s);
    if (sc === undefined || (sc.min === 0 && sc.max === Infinity)) continue;
    const on = nodesHolding(state, s);
    bounds.names.push(s);
    bounds.min.push(Math.max(0, sc.min - on));
    bounds.max.push(Math.max(0, sc.max - on));
  }
  return bounds;
}

/** A service of the cluster that must gain nodes but that no new node may hold is refused before the search. */
function checkUnavailableMinimums(checked: CheckedGrow): void {
  const { state, constraints, available } = checked;
  for (const s of state.services) {
    const min = constraints.services.get(s)?.min ?? 0;
    if (available.includes(s) || nodesHolding(state, s) >= min) continue;
    const set = constraints.mustcoexist.find((m) => m.includes(s) && m.some((t) => state.present.has(t)))!;
    throw new BadRequestError(
      `service ${s} must be on at least ${nodeCount(min)}, but no new node may hold it: it is in mustcoexist ` +
        `[${set.join(", ")}] with services whose nodes lack it`,
      { constraint: "mustcoexist", service: s, min, set },
    );
  }
}

/** Single bounds no `k` new nodes can meet, each a 400 with its cause. */
function checkEachBound(problem: CountedProblem, unplaceable: ReadonlyMap<string, string>, k: number, checked: CheckedGrow): void {
  problem.names.forEach((s, i) => {
    const missing = problem.counts.min[i]!;
    if (missing === 0) return;
    const sc = checked.constraints.services.get(s)!;
    const on = nodesHolding(checked.state, s);
    const details = { constraint: "quantities", service: s, min: sc.min, on, numMachines: k };
    if (missing > k) {
      throw new BadRequestError(
        `service ${s} must be on at least ${nodeCount(sc.min)} and is on ${on}: ${nodeCount(k)} more cannot make up the ${missing} missing`,
        details,
      );
    }
    const reason = unplaceable.get(s);
    if (reason !== undefined) {
      throw new BadRequestError(`service ${s} must be on at least ${nodeCount(sc.min)} and is on ${on}, but ${reason}`, {
        ...details,
        reason,
      });
    }
  });
}

/** The 400 of new nodes whose layout cannot exist: the conflicting bounds left, what the cluster already has. */
function infeasibleGrowError(
  problem: CountedProblem,
  conflicting: readonly QuantityBound[],
  layouts: readonly CandidateLayout[],
  k: number,
  checked: CheckedGrow,
): BadRequestError {
  const { counts, names } = problem;
  const describe = (b: QuantityBound): string =>
    `${names[b.k]} on ${b.kind === "min" ? "at least" : "at most"} ${nodeCount(b.kind === "min" ? counts.min[b.k]! : counts.max[b.k]!)}`;
  const context = [...new Set(conflicting.map((b) => names[b.k]!))].map((s) => {
    const sc = checked.constraints.services.get(s)!;
    return `${s} is on ${nodeCount(nodesHolding(checked.state, s))} and must be on ${describeNodes(sc)} in all`;
  });
  const maxed = conflicting.filter((b) => b.kind === "max").map((b) => names[b.k]!);
  const mins = conflicting.filter((b) => b.kind === "min").map((b) => names[b.k]!);
  const notes = [...conflictHints(maxed, mins, layouts), ...context];
  return new BadRequestError(`cannot add ${nodeCount(k)}: the new nodes would need ${conflicting.map(describe).join(" and ")} (${notes.join("; ")})`, {
    constraint: "quantities",
    numMachines: k,
    conflicting: conflicting.map((b) => ({
      service: names[b.k],
      on: nodesHolding(checked.state, names[b.k]!),
      ...(b.kind === "min" ? { min: counts.min[b.k] } : { max: counts.max[b.k] }),
    })),
    nodeLayouts: layouts.slice(0, 20).map((l) => ({ services: l.services, hardwaretype: l.hardwaretype, imagetype: l.imagetype })),
  });
}

/**
 * The layouts of `k` new nodes the solver prefers (see the file comment).
 *
 * @throws BadRequestError (400) with `details.constraint` `mustcoexist`, `quantities` or `layout` when no `k` new
 *   nodes keep the template's constraints.
 */
export function searchNewLayouts(checked: CheckedGrow, k: number, budget: Budget): NewLayouts {
  const { state, constraints, available } = checked;
  checkUnavailableMinimums(checked);
  const bounds = residualBounds(available, state, constraints);
  const generated = generateNodeLayouts(
    available,
    constraints,
    checked.hardware.map((h) => h.name),
    checked.images.map((i) => i.name),
    new Set(bounds.names),
    budget,
  );
  const problem = countProblem(bounds, generated.layouts, k);
  checkEachBound(problem, generated.unplaceable, k, checked);
  if (generated.layouts.length === 0) throw noNodeLayoutError(generated.unplaceable, " for new nodes");
  const result = searchCounts(problem.counts, budget.spender);
  if (result.status !== "found") {
    throw infeasibleGrowError(problem, minimalConflict(problem.counts, budget), generated.layouts, k, checked);
  }
  return { layouts: generated.layouts, counts: result.counts };
}
