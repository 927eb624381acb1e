/**
 * The layout solver: from a create request to the cluster's nodes (docs/catalog.md, Layout).
 */
import type { LayoutRequest, LayoutSolution } from "@corral/contracts";
import { Budget } from "./budget.js";
import { normalizeConstraints } from "./constraints.js";
import { checkEachBound, countProblem, noNodeLayoutError, quantityBounds } from "./count-problem.js";
import { searchCounts } from "./count-search.js";
import { infeasibleLayoutError } from "./infeasibility/infeasible-error.js";
import { minimalConflict } from "./infeasibility/minimal-conflict.js";
import { checkLayoutRequest, nonEmpty } from "./layout-request-checks.js";
import { generateNodeLayouts } from "./node-layouts.js";
import { solvedNodes } from "./solved-nodes.js";
import type { SolverOptions } from "./types.js";

export { FIRST_NODENUM } from "./solved-nodes.js";

/**
 * Solves the layout of a new cluster: checks the request against the catalog and the template, then finds
 * Coopr's preferred layout (the lexicographically greatest valid count vector over the node layouts in
 * Coopr's preference order), or proves that none exists and says which constraints clash.
 *
 * @throws BadRequestError (400, `bad_request`) when the request cannot be satisfied; `details.constraint`
 *   names the check (`numMachines`, `size`, `hardwaretype`, `imagetype`, `compatibility.services`,
 *   `services`, `requires`, `conflicts`, `quantities`).
 * @throws BadRequestError (400, `solver_budget_exhausted`) when the search runs out of steps or time.
 */
export function solveLayout(request: LayoutRequest, options?: SolverOptions): LayoutSolution {
  const budget = new Budget(options, "layout solver");
  const { template } = request;
  const constraints = normalizeConstraints(template);
  const { hardware, images, services } = checkLayoutRequest(request, constraints);
  const machines = request.numMachines;

  const bounds = quantityBounds(services, constraints, options?.requireEveryService === true);
  const generated = generateNodeLayouts(
    services,
    constraints,
    hardware.map((h) => h.name),
    images.map((i) => i.name),
    new Set(bounds.names),
    budget,
  );
  const problem = countProblem(bounds, generated.layouts, machines);
  checkEachBound(problem, generated.unplaceable, machines);
  if (generated.layouts.length === 0) throw noNodeLayoutError(generated.unplaceable);

  const result = searchCounts(problem.counts, budget.spender);
  if (result.status !== "found") {
    throw infeasibleLayoutError(problem, minimalConflict(problem.counts, budget), generated.layouts, machines);
  }

  const dnsSuffix = nonEmpty(request.dnsSuffix) ?? nonEmpty(template.defaults.dnsSuffix);
  const { nodes, layout } = solvedNodes(generated.layouts, result.counts, hardware, images, {
    clusterId: request.clusterId,
    clusterName: request.clusterName,
    dnsSuffix,
  });
  return {
    services,
    dnsSuffix: dnsSuffix === undefined ? "local" : dnsSuffix.replace(/^\./, ""),
    nodes,
    layout,
    stats: { steps: budget.steps, candidateLayouts: generated.layouts.length },
  };
}
