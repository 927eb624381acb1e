/**
 * The checks of a grow request before any search, in the create's order where they match: the machine count, the
 * template size, the usable hardware and image types; then the cluster's current layout, which must meet its
 * template already (a grow changes no existing node, so it cannot mend one).
 */
import { BadRequestError, describeValue } from "@corral/contracts";
import type { UsableType } from "../catalog.js";
import { layoutViolations } from "../check-layout.js";
import { normalizeConstraints, type NormalizedConstraints } from "../constraints.js";
import { resolveNodeTypes } from "../layout-request-checks.js";
import { clusterState, type ClusterState } from "./cluster-state.js";
import { sizeDetails, sizeProblem } from "./size.js";
import type { GrowRequest } from "./types.js";

/** A grow request that passed the checks, in the form the search reads. */
export interface CheckedGrow {
  constraints: NormalizedConstraints;
  state: ClusterState;
  /** Usable hardware types for new nodes, sorted by name (one when pinned). */
  hardware: UsableType[];
  /** Usable image types for new nodes, sorted by name (one when pinned). */
  images: UsableType[];
  /** The services new nodes may hold (see {@link servicesForNewNodes}), in cluster-list order. */
  available: string[];
}

/**
 * The cluster's services that new nodes may hold: all of them but a service on no node that shares a mustcoexist
 * set with a service on some node. Such a service would join that set on the cluster, and the existing nodes
 * holding the other member lack it, so no new node may bring it. That happens when a service added after the create
 * must coexist with one the create left on no node (the add-services solver reads mustcoexist over the services on
 * nodes).
 */
export function servicesForNewNodes(state: ClusterState, constraints: NormalizedConstraints): string[] {
  return state.services.filter(
    (s) => state.present.has(s) || !constraints.mustcoexist.some((set) => set.includes(s) && set.some((t) => state.present.has(t))),
  );
}

/** @throws BadRequestError (400) naming the failed check in `details.constraint`. */
export function checkGrowRequest(request: GrowRequest): CheckedGrow {
  const { template } = request;
  const constraints = normalizeConstraints(template);
  const state = clusterState(request.nodes, request.clusterServices);
  const k = request.numMachines;
  if (!Number.isSafeInteger(k) || k < 1) {
    throw new BadRequestError(`numMachines must be a positive integer, got ${describeValue(k)}`, {
      constraint: "numMachines",
      numMachines: k,
    });
  }
  const size = sizeProblem(constraints, template.name, state.nodes.length, k);
  if (size !== undefined) {
    throw new BadRequestError(size, { constraint: "size", ...sizeDetails(constraints), nodes: state.nodes.length, numMachines: k });
  }
  const { hardware, images } = resolveNodeTypes(request);
  const current = layoutViolations(constraints, state.nodes);
  if (current.length > 0) {
    throw new BadRequestError(
      `the cluster's current layout already breaks its template: ${current.map((v) => v.message).join("; ")}`,
      { constraint: current[0]!.constraint, violations: current },
    );
  }
  return { constraints, state, hardware, images, available: servicesForNewNodes(state, constraints) };
}
