import { NotFoundError, type Identity, type JsonObject, type ReplaceNodeRequest, type RollingRequest } from "@corral/contracts";
import { replacementNode } from "@corral/solver";
import type { Solver } from "../adapters/solver.js";
import { clusterNodeIds, nextNodenumOf } from "../domain/ids.js";
import { changedByReplacement, nodeRecordOf } from "../domain/node-config.js";
import { isUnreachable } from "../domain/node-health.js";
import { nodeTypesOf } from "../domain/node-types.js";
import type { ClusterRecord } from "../domain/records.js";
import { findVisibleCluster } from "../queries/visible-cluster.js";
import type { OperationContext } from "./context.js";
import { prepareJob, type PreparedJob } from "./start-job.js";

export type { ReplaceNodeRequest };

/** What a replacement takes besides the node: the request's, or none for a repair nobody asked for. */
export interface ReplacementOptions {
  restart?: boolean;
  rolling?: RollingRequest;
  /** Absent for an automatic repair: its tasks run with the provider's own fields only. */
  providerFields?: JsonObject;
}

/**
 * `POST /clusters/{id}/nodes/{nodeId}/replace`: 404 for a node that is not the cluster's; see
 * {@link prepareReplacement}.
 */
export async function prepareReplaceNode(
  ctx: OperationContext,
  solver: Solver,
  identity: Identity,
  id: string,
  nodeId: string,
  req: ReplaceNodeRequest,
): Promise<PreparedJob> {
  const cluster = await findVisibleCluster(ctx.deps, identity, id);
  return prepareReplacement(ctx, solver, cluster, nodeId, {
    restart: req.restart ?? false,
    providerFields: req.providerFields ?? {},
    ...(req.rolling !== undefined ? { rolling: req.rolling } : {}),
  });
}

/**
 * A new machine for node `nodeId` of `cluster` (docs/catalog.md, Growing and shrinking): the solver's replacement
 * (the same services, hardware type and image type under the cluster's next nodenum; 400 when a type can no longer
 * be built) is brought up as a grown node is, the remaining nodes whose expanded config changes get CONFIGURE
 * (restarted with `restart`), then the old machine is deleted unless its health says the provider cannot reach it,
 * and the old node leaves the cluster when the plan succeeds. 404 for an unknown node, 409 when the tenant's
 * maxNodes has no room for the new node (it is built before the old one goes), and as for every job.
 */
export async function prepareReplacement(
  ctx: OperationContext,
  solver: Solver,
  cluster: ClusterRecord,
  nodeId: string,
  options: ReplacementOptions,
): Promise<PreparedJob> {
  const { deps } = ctx;
  const ids = clusterNodeIds(cluster);
  if (!ids.includes(nodeId)) throw new NotFoundError("node", nodeId);
  const [catalog, tenant, nodes] = await Promise.all([
    deps.tenancy.catalog(cluster.tenant),
    deps.tenancy.tenant(cluster.tenant),
    deps.nodes.getMany(cluster.id, ids),
  ]);
  const old = nodes.find((n) => n.id === nodeId);
  if (!old) throw new NotFoundError("node", nodeId);
  const nodenum = nextNodenumOf(cluster);
  const solved = replacementNode({
    template: cluster.clusterTemplate,
    provider: { name: cluster.provider.name },
    catalog: { hardwareTypes: catalog.hardwaretypes, imageTypes: catalog.imagetypes },
    node: { id: old.id, nodenum: old.nodenum, services: old.services, ...nodeTypesOf(old) },
    nodenum,
    clusterId: cluster.id,
    clusterName: cluster.name,
    dnsSuffix: cluster.dnsSuffix,
  });
  if (tenant) await deps.usage.checkNodes(tenant.tenant, 1);
  const added = nodeRecordOf(cluster.id, solved);
  return prepareJob(ctx, solver, cluster, {
    action: "replace_node",
    addedNodes: [added],
    removedNodes: [old],
    ...(isUnreachable(old) ? { unreachableNodes: [old.id] } : {}),
    changedNodes: changedByReplacement(cluster.config, cluster.ownerId, nodes, new Set([old.id]), [added]),
    restart: options.restart ?? false,
    ...(options.rolling !== undefined ? { rolling: options.rolling } : {}),
    changes: { numNodes: cluster.numNodes + 1, nextNodenum: nodenum + 1 },
    ...(options.providerFields !== undefined ? { providerFields: options.providerFields } : {}),
  });
}
