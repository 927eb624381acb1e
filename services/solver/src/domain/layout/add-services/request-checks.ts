/**
 * The checks of an add-services request before any search, as Coopr's `validateServicesToAdd` (existence of
 * the cluster's and the new services, compatibility of the new ones, requires and conflicts over the union),
 * plus: an empty list, a service already on the cluster, a cluster without nodes, and a current layout that
 * already breaks its template.
 */
import { BadRequestError, type AddServicesRequest, type ExistingNode } from "@corral/contracts";
import { checkDependencies, checkServiceCompatibility, lookupServices, toNameMap } from "../catalog.js";
import { layoutViolations } from "../check-layout.js";
import { compareStrings, normalizeConstraints, type NormalizedConstraints } from "../constraints.js";

/** An add-services request that passed the checks, in the form the search reads. */
export interface CheckedAddServices {
  constraints: NormalizedConstraints;
  /** Sorted by nodenum (then id). */
  nodes: ExistingNode[];
  /** The cluster's services before (request list or union of the nodes' services), deduplicated. */
  clusterServices: string[];
  /** The services to add, deduplicated, in request order. */
  toAdd: string[];
}

/** @throws BadRequestError (400) naming the failed check in `details.constraint`. */
export function checkAddServicesRequest(request: AddServicesRequest): CheckedAddServices {
  const constraints = normalizeConstraints(request.template);
  const toAdd = [...new Set(request.services)];
  if (toAdd.length === 0) throw new BadRequestError("no services to add", { constraint: "services" });
  const nodes = [...request.nodes].sort((a, b) => a.nodenum - b.nodenum || compareStrings(a.id, b.id));
  if (nodes.length === 0) throw new BadRequestError("the cluster has no nodes", { constraint: "nodes" });
  const clusterServices = [...new Set(request.clusterServices ?? nodes.flatMap((n) => [...n.services]))];
  const already = toAdd.filter((s) => clusterServices.includes(s));
  if (already.length > 0) {
    throw new BadRequestError(`${already.join(", ")} ${already.length === 1 ? "is" : "are"} already on the cluster`, {
      constraint: "services",
      services: already,
    });
  }
  const catalog = toNameMap(request.catalog.services);
  const union = lookupServices(catalog, [...clusterServices, ...toAdd]);
  checkServiceCompatibility(request.template, toAdd);
  checkDependencies(union);

  const existing = layoutViolations(constraints, nodes);
  if (existing.length > 0) {
    throw new BadRequestError(
      `the cluster's current layout already breaks its template: ${existing.map((v) => v.message).join("; ")}`,
      { constraint: existing[0]!.constraint, violations: existing },
    );
  }
  return { constraints, nodes, clusterServices, toAdd };
}
