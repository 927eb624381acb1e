/**
 * A small set of quantity bounds that cannot hold together, for the error of an infeasible count problem.
 *
 * When the LP relaxation is infeasible (the usual proof), its Farkas certificate names the bounds involved and
 * a deletion filter with LP checks shrinks them to a set where dropping any bound makes the relaxation feasible.
 * Otherwise (integer-only infeasibility) the deletion filter runs full searches, each with a capped share of
 * the remaining budget; a bound whose test runs out of steps is kept, so the set is always infeasible, if not
 * always minimal.
 */
import { isCorralError } from "@corral/contracts";
import { SOLVER_BUDGET_EXHAUSTED, SubBudget, type Budget } from "../budget.js";
import { searchCounts, type CountProblem } from "../count-search.js";
import { lpConflict, type QuantityBound } from "./lp-conflict.js";

/** The problem with only `bounds` kept (every other min 0, every other max unlimited). */
function withOnly(problem: CountProblem, bounds: readonly QuantityBound[]): CountProblem {
  const min = problem.min.map(() => 0);
  const max = problem.max.map(() => Infinity);
  for (const b of bounds) {
    if (b.kind === "min") min[b.k] = problem.min[b.k]!;
    else max[b.k] = problem.max[b.k]!;
  }
  return { ...problem, min, max };
}

/** By counted index, a max before a min. */
const byService = (bounds: readonly QuantityBound[]): QuantityBound[] =>
  [...bounds].sort((a, b) => a.k - b.k || (a.kind === b.kind ? 0 : a.kind === "max" ? -1 : 1));

/** Every bound that restricts anything: a max below the machine count, a min above 0. */
function restrictingBounds(problem: CountProblem): QuantityBound[] {
  const bounds: QuantityBound[] = [];
  problem.min.forEach((_, k) => {
    if (problem.max[k]! < problem.n) bounds.push({ k, kind: "max" });
    if (problem.min[k]! > 0) bounds.push({ k, kind: "min" });
  });
  return bounds;
}

/**
 * Shrinks the bounds of an infeasible `problem` to a conflicting set (see the file comment). Spends from
 * `budget`; if it runs out while shrinking, the set found so far (still infeasible) is returned.
 */
export function minimalConflict(problem: CountProblem, budget: Budget): QuantityBound[] {
  const spend = (steps: number) => budget.spend(steps);
  const allBounds = restrictingBounds(problem);
  // `conflicting` is infeasible at every point.
  let conflicting: QuantityBound[] = [...allBounds];
  try {
    const certificate = lpConflict(problem, spend);
    if (certificate !== undefined) {
      conflicting = byService(
        certificate.filter((b, i) => certificate.findIndex((c) => c.k === b.k && c.kind === b.kind) === i),
      );
      for (const bound of [...conflicting]) {
        const trial = conflicting.filter((b) => b !== bound);
        if (lpConflict(withOnly(problem, trial), spend) !== undefined) conflicting = trial;
      }
    } else {
      const searchShare = Math.max(1000, Math.min(200_000, Math.floor(budget.remaining() / (2 * allBounds.length + 2))));
      for (const bound of allBounds) {
        const trial = conflicting.filter((b) => b !== bound);
        const sub = new SubBudget(budget, searchShare);
        const outcome = searchCounts(withOnly(problem, trial), (steps) => sub.trySpend(steps));
        if (outcome.status === "infeasible") conflicting = trial;
      }
    }
  } catch (err) {
    if (!isCorralError(err) || err.code !== SOLVER_BUDGET_EXHAUSTED) throw err;
  }
  return conflicting;
}
