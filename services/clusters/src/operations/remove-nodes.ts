import type { Identity, RemoveNodesRequest } from "@corral/contracts";
import { checkShrink, shrinkRefusal } from "@corral/solver";
import type { Solver } from "../adapters/solver.js";
import { clusterNodeIds } from "../domain/ids.js";
import { remainingWithChangedConfig } from "../domain/node-config.js";
import { nodeTypesOf } from "../domain/node-types.js";
import { findVisibleCluster } from "../queries/visible-cluster.js";
import type { OperationContext } from "./context.js";
import { prepareJob, type PreparedJob } from "./start-job.js";

export type { RemoveNodesRequest };

/**
 * `DELETE /clusters/{id}/nodes/{nodeId}` and `POST /clusters/{id}/nodes/remove`: 404 for a node that is not the
 * cluster's, 409 naming the constraint when the cluster would break size.min, a quantities.min or a requires
 * (docs/catalog.md, Growing and shrinking). The removed nodes get STOP, REMOVE and DELETE; the remaining nodes
 * whose expanded config changes get CONFIGURE. The nodes leave the cluster when the plan succeeds, with the services
 * no remaining node holds; when it fails they stay, services and all.
 */
export async function prepareRemoveNodes(
  ctx: OperationContext,
  solver: Solver,
  identity: Identity,
  id: string,
  req: RemoveNodesRequest,
): Promise<PreparedJob> {
  const { deps } = ctx;
  const cluster = await findVisibleCluster(deps, identity, id);
  const nodes = await deps.nodes.getMany(cluster.id, clusterNodeIds(cluster));
  const check = checkShrink({
    template: cluster.clusterTemplate,
    catalog: { services: cluster.serviceDefs },
    nodes: nodes.map((n) => ({ id: n.id, nodenum: n.nodenum, services: n.services, ...nodeTypesOf(n) })),
    remove: req.nodes,
  });
  if (!check.ok) throw shrinkRefusal(check.violations);
  const leaving = new Set(req.nodes);
  return prepareJob(ctx, solver, cluster, {
    action: "remove_nodes",
    removedNodes: nodes.filter((n) => leaving.has(n.id)),
    leavingServices: check.leavingServices,
    changedNodes: remainingWithChangedConfig(cluster.config, cluster.ownerId, nodes, leaving),
    restart: req.restart ?? false,
    ...(req.rolling !== undefined ? { rolling: req.rolling } : {}),
    providerFields: req.providerFields ?? {},
  });
}
