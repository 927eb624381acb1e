import type { AddNodesRequest, Identity } from "@corral/contracts";
import type { Solver } from "../adapters/solver.js";
import { clusterNodeIds, nextNodenumOf } from "../domain/ids.js";
import { nodeRecordOf, nodesWithChangedConfig } from "../domain/node-config.js";
import { nodeTypesOf } from "../domain/node-types.js";
import { findVisibleCluster } from "../queries/visible-cluster.js";
import type { OperationContext } from "./context.js";
import { prepareJob, type PreparedJob } from "./start-job.js";

export type { AddNodesRequest };

/**
 * `POST /clusters/{id}/nodes`: the solver service lays out the new nodes (docs/catalog.md, Growing and shrinking;
 * 400 naming the constraint), numbered from the cluster's next nodenum so that a removed node's id is never given
 * again; the remaining nodes whose expanded config the new nodes change get CONFIGURE. 409 when the tenant's
 * maxNodes has no room for them. The nodes and the cluster's numbering change in the write that starts the job.
 */
export async function prepareAddNodes(
  ctx: OperationContext,
  solver: Solver,
  identity: Identity,
  id: string,
  req: AddNodesRequest,
): Promise<PreparedJob> {
  const { deps } = ctx;
  const cluster = await findVisibleCluster(deps, identity, id);
  const [catalog, tenant, nodes] = await Promise.all([
    deps.tenancy.catalog(cluster.tenant),
    deps.tenancy.tenant(cluster.tenant),
    deps.nodes.getMany(cluster.id, clusterNodeIds(cluster)),
  ]);
  const firstNodenum = nextNodenumOf(cluster);
  const grown = await solver.grow({
    template: cluster.clusterTemplate,
    provider: { name: cluster.provider.name },
    catalog: { hardwareTypes: catalog.hardwaretypes, imageTypes: catalog.imagetypes },
    nodes: nodes.map((n) => ({ id: n.id, nodenum: n.nodenum, services: n.services, ...nodeTypesOf(n) })),
    clusterServices: cluster.services,
    numMachines: req.numMachines,
    ...(req.services !== undefined ? { services: req.services } : {}),
    ...(req.hardwaretype !== undefined ? { hardwaretype: req.hardwaretype } : {}),
    ...(req.imagetype !== undefined ? { imagetype: req.imagetype } : {}),
    firstNodenum,
    clusterId: cluster.id,
    clusterName: cluster.name,
    dnsSuffix: cluster.dnsSuffix,
  });
  if (tenant) await deps.usage.checkNodes(tenant.tenant, grown.nodes.length);
  const added = grown.nodes.map((n) => nodeRecordOf(cluster.id, n));
  return prepareJob(ctx, solver, cluster, {
    action: "add_nodes",
    addedNodes: added,
    changedNodes: nodesWithChangedConfig(cluster.config, cluster.ownerId, nodes, added),
    restart: req.restart ?? false,
    ...(req.rolling !== undefined ? { rolling: req.rolling } : {}),
    changes: {
      numNodes: cluster.numNodes + added.length,
      nextNodenum: Math.max(firstNodenum, ...added.map((n) => n.nodenum + 1)),
    },
    providerFields: req.providerFields ?? {},
  });
}

/**
 * Starts a prepared job, reserving room in the tenant's maxNodes for the nodes it adds first (409 when there is
 * none) and giving it back when the job does not start.
 */
export async function startWithNodes(ctx: OperationContext, job: PreparedJob): Promise<string> {
  const added = job.request.addedNodes?.length ?? 0;
  if (added === 0) return ctx.actors.jobs.start(job);
  const { deps } = ctx;
  const tenant = await deps.tenancy.tenant(job.cluster.tenant);
  if (tenant) await deps.usage.reserveNodes(tenant.tenant, added);
  try {
    return await ctx.actors.jobs.start(job);
  } catch (err) {
    if (tenant) await deps.usage.releaseNodes(tenant.tenant.name, added).catch(() => {});
    throw err;
  }
}
