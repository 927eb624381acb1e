/**
 * The add-services solver (docs/catalog.md, Adding services to a cluster): places new services on the existing
 * nodes of a cluster; nothing moves, no node is added, no node changes hardware or image.
 *
 * It searches what Coopr's `ClusterLayoutUpdater` searches, in the same order, so it returns Coopr's answer
 * whenever Coopr's answer holds every requested service:
 * - services with a service constraint first (max ascending, min descending, name), then the others by
 *   name (Coopr: hash-set order);
 * - for one service, the candidate changes are "add it to c_j nodes of node layout j" over the layouts that
 *   can take it, sorted by Coopr's node-layout comparator, with the total k going from min(max, nodes that can
 *   take it) down to max(min, 1), and for each k the vectors c in descending lexicographic order;
 * - a change is kept when the whole layout stays valid, then the next service is placed; on a dead end the
 *   next change is tried, with the pending services restored (Coopr lost them: its answer could silently drop
 *   a service).
 *
 * Differences: candidate changes that cannot be valid are never generated (a node layout that must take the
 * service because of a mustcoexist set takes it on every node; one that cannot take it gets none), and the
 * pending services are checked ahead: the nodes that could still take a pending service only get fewer and
 * the nodes that must take it only get more as services are added, so a change that leaves a pending service
 * too few possible nodes, or a forced node that cannot take it, is cut (also for partial vectors). Concrete
 * nodes are chosen deterministically: within a node layout, the lowest nodenums first.
 */
import { BadRequestError, type AddServicesRequest, type AddServicesResult } from "@corral/contracts";
import { Budget } from "../budget.js";
import type { SolverOptions } from "../types.js";
import { groupNodes } from "./node-groups.js";
import { placementResult } from "./placement-result.js";
import { PlacementSearch, placementOrder } from "./placement-search.js";
import { checkAddServicesRequest } from "./request-checks.js";
import { placementOptions } from "./service-options.js";

/**
 * Adds services to an active cluster's existing nodes.
 *
 * @throws BadRequestError (400, `bad_request`) when the request is invalid or no placement exists;
 *   `details.constraint` names the check (`services`, `compatibility.services`, `requires`, `conflicts`,
 *   `layout`, `mustcoexist`, `quantities`).
 * @throws BadRequestError (400, `solver_budget_exhausted`) when the search runs out of steps or time.
 */
export function addServices(request: AddServicesRequest, options?: SolverOptions): AddServicesResult {
  const budget = new Budget(options, "add-services solver");
  const { constraints, nodes, clusterServices, toAdd } = checkAddServicesRequest(request);
  const order = placementOrder(toAdd, constraints);
  const initial = groupNodes(nodes);
  // Each service alone, on the cluster as it is: a failure here can only get worse, so report it precisely.
  for (const service of order) {
    const alone = placementOptions(initial, service, constraints, nodes.length);
    if (!alone.ok) throw new BadRequestError(alone.message, alone.details);
  }
  const search = new PlacementSearch(constraints, nodes.length, budget);
  const placements = search.place(initial, order, 0);
  if (placements === null) throw search.failure(order);
  return placementResult(nodes, clusterServices, toAdd, placements, {
    steps: budget.steps,
    candidateLayouts: initial.groups.length,
  });
}
