/**
 * Growing a live cluster (docs/catalog.md, Growing and shrinking): new nodes whose services, hardware and image
 * types keep every template constraint on the whole cluster, without changing an existing node.
 */
import { BadRequestError, type ExistingNode, type SolvedNode } from "@corral/contracts";
import { Budget } from "../budget.js";
import { layoutViolations } from "../check-layout.js";
import { describeBounds } from "../constraints.js";
import { nonEmpty } from "../layout-request-checks.js";
import { FIRST_NODENUM, solvedNodes } from "../solved-nodes.js";
import type { LayoutViolation, SolverOptions } from "../types.js";
import { nodeCount, type ClusterState } from "./cluster-state.js";
import { checkGrowRequest, type CheckedGrow } from "./grow-checks.js";
import { searchNewLayouts } from "./grow-search.js";
import { requestedLayouts } from "./grow-services.js";
import type { GrowRequest, GrowResult } from "./types.js";

/** One above the highest nodenum of `nodes`; FIRST_NODENUM without nodes. */
export function nextNodenum(nodes: readonly Pick<ExistingNode, "nodenum">[]): number {
  return nodes.reduce((next, n) => Math.max(next, n.nodenum + 1), FIRST_NODENUM);
}

function firstNodenumOf(request: GrowRequest, state: ClusterState): number {
  const next = nextNodenum(state.nodes);
  const first = request.firstNodenum ?? next;
  if (!Number.isSafeInteger(first) || first < next) {
    throw new BadRequestError(`firstNodenum must be an integer of at least ${next} (above every node's), got ${String(first)}`, {
      constraint: "firstNodenum",
      firstNodenum: first,
    });
  }
  return first;
}

/**
 * The template constraints the cluster with `added` nodes breaks: those `checkLayout` finds, and the quantities
 * min of a service of the cluster's list that is on no node.
 */
export function grownLayoutViolations(checked: CheckedGrow, added: readonly SolvedNode[]): LayoutViolation[] {
  const all: ExistingNode[] = [...checked.state.nodes, ...added];
  const violations = layoutViolations(checked.constraints, all);
  const onSomeNode = new Set(all.flatMap((n) => n.services));
  for (const s of checked.state.services) {
    const sc = checked.constraints.services.get(s);
    if (sc !== undefined && sc.min > 0 && !onSomeNode.has(s)) {
      violations.push({ constraint: "quantities", message: `${s} is on no node, but must be on ${describeBounds(sc)}` });
    }
  }
  return violations;
}

/**
 * Adds `numMachines` nodes to a live cluster. Without `services`, the solver chooses the new nodes' layouts as a
 * create would for the larger size, given the nodes already there (see grow-search.ts); with `services`, every new
 * node holds exactly those. Existing nodes never change: the answer holds only the new nodes.
 *
 * @throws BadRequestError (400, `bad_request`) when no such nodes exist or the request is invalid;
 *   `details.constraint` names the check (`numMachines`, `size`, `hardwaretype`, `imagetype`, `services`,
 *   `mustcoexist`, `cantcoexist`, `hardwaretypes`, `imagetypes`, `quantities`, `layout`, `firstNodenum`).
 * @throws BadRequestError (400, `solver_budget_exhausted`) when the search runs out of steps or time.
 */
export function growCluster(request: GrowRequest, options?: SolverOptions): GrowResult {
  const budget = new Budget(options, "grow solver");
  const checked = checkGrowRequest(request);
  const k = request.numMachines;
  const requested = request.services !== undefined && request.services.length > 0 ? request.services : undefined;
  const firstNodenum = firstNodenumOf(request, checked.state);
  const chosen = requested === undefined ? searchNewLayouts(checked, k, budget) : requestedLayouts(checked, requested, k);
  const naming = { clusterId: request.clusterId, clusterName: request.clusterName, dnsSuffix: nonEmpty(request.dnsSuffix) };
  const { nodes, layout } = solvedNodes(chosen.layouts, chosen.counts, checked.hardware, checked.images, naming, firstNodenum);
  const violations = grownLayoutViolations(checked, nodes);
  if (violations.length > 0) {
    const message = `${nodeCount(k)} more would break the template: ${violations.map((v) => v.message).join("; ")}`;
    // The search only picks layouts that keep the constraints: a violation here is a solver bug, not a bad request.
    if (requested === undefined) throw new Error(`grow solver: ${message}`);
    throw new BadRequestError(message, { constraint: violations[0]!.constraint, violations });
  }
  return { nodes, layout, stats: { steps: budget.steps, candidateLayouts: chosen.layouts.length } };
}
