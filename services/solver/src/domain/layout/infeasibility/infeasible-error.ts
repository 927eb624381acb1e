/**
 * The 400 of a layout that cannot exist: the conflicting quantity bounds in words, with hints read from the
 * candidate node layouts (services that never share a node, a max every node is subject to, ...).
 */
import { BadRequestError } from "@corral/contracts";
import type { CountedProblem } from "../count-problem.js";
import type { CandidateLayout } from "../node-layouts.js";
import type { QuantityBound } from "./lp-conflict.js";

/** Why the layouts cannot meet the bounds, as far as the layouts alone show it. */
export function conflictHints(maxed: readonly string[], mins: readonly string[], layouts: readonly CandidateLayout[]): string[] {
  const hints: string[] = [];
  if (maxed.length > 0 && layouts.every((l) => l.services.some((s) => maxed.includes(s)))) {
    hints.push(`every possible node holds ${maxed.length === 1 ? maxed[0] : `one of ${maxed.join(", ")}`}`);
  }
  for (let a = 0; a < mins.length; a++) {
    for (let b = a + 1; b < mins.length; b++) {
      const first = mins[a]!;
      const second = mins[b]!;
      if (!layouts.some((l) => l.services.includes(first) && l.services.includes(second))) {
        hints.push(`${first} and ${second} never share a node`);
      }
    }
  }
  for (const withMin of mins) {
    for (const withMax of maxed) {
      if (withMin !== withMax && layouts.every((l) => !l.services.includes(withMin) || l.services.includes(withMax))) {
        hints.push(`every node with ${withMin} also holds ${withMax}`);
      }
    }
  }
  return hints;
}

/** The error naming `conflicting`, bounds of `problem` that no layout of `machines` nodes can meet together. */
export function infeasibleLayoutError(
  problem: CountedProblem,
  conflicting: readonly QuantityBound[],
  layouts: readonly CandidateLayout[],
  machines: number,
): BadRequestError {
  const { counts, names } = problem;
  const nodes = (count: number | undefined): string => `${count} node${count === 1 ? "" : "s"}`;
  const describe = (b: QuantityBound): string =>
    b.kind === "min" ? `${names[b.k]} on at least ${nodes(counts.min[b.k])}` : `${names[b.k]} on at most ${nodes(counts.max[b.k])}`;
  const maxed = conflicting.filter((b) => b.kind === "max").map((b) => names[b.k]!);
  const mins = conflicting.filter((b) => b.kind === "min").map((b) => names[b.k]!);
  const hints = conflictHints(maxed, mins, layouts);
  const message =
    `no layout of ${nodes(machines)} can have ${conflicting.map(describe).join(" and ")}` +
    (hints.length > 0 ? ` (${hints.join("; ")})` : "");
  return new BadRequestError(message, {
    constraint: "quantities",
    numMachines: machines,
    conflicting: conflicting.map((b) =>
      b.kind === "min" ? { service: names[b.k], min: counts.min[b.k] } : { service: names[b.k], max: counts.max[b.k] },
    ),
    nodeLayouts: layouts.slice(0, 20).map((l) => ({ services: l.services, hardwaretype: l.hardwaretype, imagetype: l.imagetype })),
  });
}
