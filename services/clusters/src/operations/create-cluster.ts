import { validateMacros } from "@corral/solver";
import {
  BadRequestError,
  DRY_RUN_CLUSTER_ID,
  NotFoundError,
  type ClusterTemplate,
  type DryRunResult,
  type Identity,
  type Json,
  type JsonObject,
  type LayoutSolution,
  type Plan,
  type Provider,
  type Service,
  type TenantRecordHead,
} from "@corral/contracts";
import { planJob } from "../actor/jobs.js";
import type { Solver } from "../adapters/solver.js";
import type { NewCluster } from "../domain/cluster-record.js";
import { formatClusterId, formatPlanId } from "../domain/ids.js";
import { leaseExpiry } from "../domain/lease.js";
import type { ClusterNode } from "../domain/records.js";
import type { CreateClusterRequest } from "../domain/requests.js";
import type { OperationContext } from "./context.js";
import { dryRunResult } from "./dry-run.js";
import { checkProviderFields } from "./provider-fields.js";

function findIn<T extends { name: string }>(list: readonly T[], name: string): T | undefined {
  return list.find((e) => e.name === name);
}

/** A create checked, solved and planned, nothing of it written: what {@link createCluster} commits and a dry run answers. */
interface PreparedCreate {
  id: string;
  request: CreateClusterRequest;
  /** The tenant as read before the checks: its uid tells it from a tenant of the same name created since. */
  tenant: TenantRecordHead;
  template: ClusterTemplate;
  provider: Provider;
  config: JsonObject;
  createTime: number;
  expireTime: number;
  solution: LayoutSolution;
  serviceDefs: Service[];
  plan: Plan;
}

/**
 * The checks, layout and plan of a create, with `solver`, for the cluster id `takeId` answers. Writes nothing
 * (but what `takeId` takes).
 */
async function prepareCreate(
  { deps }: OperationContext,
  solver: Solver,
  identity: Identity,
  req: CreateClusterRequest,
  takeId: () => Promise<string>,
): Promise<PreparedCreate> {
  // Independent reads run side by side; the tenant's absence is reported before anything the catalog says.
  const catalogRead = deps.tenancy.catalog(identity.tenant);
  catalogRead.catch(() => {});
  const record = await deps.tenancy.tenant(identity.tenant);
  if (!record) throw new NotFoundError("tenant", identity.tenant);
  const catalog = await catalogRead;
  const template: ClusterTemplate | undefined = findIn(catalog.clustertemplates, req.clusterTemplate);
  if (!template) throw new BadRequestError(`cluster template ${req.clusterTemplate} does not exist`, { field: "clusterTemplate" });
  const providerName = req.provider ?? template.defaults.provider;
  const provider = findIn(catalog.providers, providerName);
  if (!provider) throw new BadRequestError(`provider ${providerName} does not exist`, { field: "provider" });
  const createTime = deps.now();
  const expireTime = leaseExpiry(template, req.initialLeaseDuration, createTime);
  const config = (req.config ?? template.defaults.config) as JsonObject;
  validateMacros(config as Json);
  const [, id] = await Promise.all([checkProviderFields(deps.tenancy, provider, req.providerFields ?? {}), takeId()]);
  const solution = await solver.layout({
    template,
    provider,
    catalog: { services: catalog.services, hardwareTypes: catalog.hardwaretypes, imageTypes: catalog.imagetypes },
    numMachines: req.numMachines,
    clusterId: id,
    clusterName: req.name,
    ...(req.services !== undefined ? { services: req.services } : {}),
    ...(req.hardwaretype !== undefined ? { hardwaretype: req.hardwaretype } : {}),
    ...(req.imagetype !== undefined ? { imagetype: req.imagetype } : {}),
    ...(req.dnsSuffix !== undefined ? { dnsSuffix: req.dnsSuffix } : {}),
  });
  const serviceDefs: Service[] = solution.services
    .map((name) => findIn(catalog.services, name))
    .filter((s): s is Service => s !== undefined);
  const plan = await planJob(solver, "cluster_create", {
    nodes: solution.nodes.map((n) => ({ id: n.id, services: n.services })),
    services: serviceDefs,
  });
  return { id, request: req, tenant: record, template, provider, config, createTime, expireTime, solution, serviceDefs, plan };
}

/**
 * Creates a cluster: validates, solves and plans before answering (docs/decisions.md, A create is validated, solved and
 * planned before it is answered), reserves quota, writes nodes and the create plan, then commits by creating the
 * cluster actor, and dispatches the first stage. A crash before the commit leaves only unreachable keys under an id
 * never used again.
 */
export async function createCluster(ctx: OperationContext, identity: Identity, req: CreateClusterRequest): Promise<string> {
  const takeId = async () => formatClusterId(await ctx.deps.counters.next("clusters", { block: 32 }));
  const prepared = await prepareCreate(ctx, ctx.deps.solver, identity, req, takeId);
  await commitCreate(ctx, identity, prepared);
  return prepared.id;
}

/**
 * What a create would do, answered instead of done: the same checks, layout and plan (by `solver`), and the quota
 * refusal the create would get now (409); no id is taken, nothing reserved or written.
 */
export async function dryRunCreate(ctx: OperationContext, solver: Solver, identity: Identity, req: CreateClusterRequest): Promise<DryRunResult> {
  const { tenant, solution, plan } = await prepareCreate(ctx, solver, identity, req, async () => DRY_RUN_CLUSTER_ID);
  await ctx.deps.usage.check(tenant.tenant, solution.nodes.length);
  const nodes = solution.nodes.map((n) => ({
    id: n.id,
    hostname: n.properties.hostname,
    services: n.services,
    hardwaretype: n.hardwaretype,
    imagetype: n.imagetype,
  }));
  return dryRunResult(DRY_RUN_CLUSTER_ID, solution.services, nodes, plan);
}

/** Reserves quota and has the actors write a prepared create; the cluster actor's creation is the commit. */
async function commitCreate({ deps, actors }: OperationContext, identity: Identity, prepared: PreparedCreate): Promise<void> {
  const { id, request: req, tenant: record, template, provider, config, createTime, expireTime, solution, serviceDefs } = prepared;
  const { tenant } = record;
  await deps.usage.reserve(tenant, solution.nodes.length);
  try {
    // A tenant delete marks the tenant before it counts reservations: one it did not count sees the mark here.
    const still = await deps.tenancy.tenant(tenant.name);
    if (!still || still.uid !== record.uid) throw new NotFoundError("tenant", tenant.name);
    const nodes: ClusterNode[] = solution.nodes.map((n) => ({
      id: n.id,
      clusterId: id,
      nodenum: n.nodenum,
      services: n.services,
      properties: { ...n.properties },
      results: {},
      actions: [],
      applied: [],
    }));
    const cluster: NewCluster = {
      id,
      tenant: identity.tenant,
      name: req.name,
      description: req.description ?? "",
      ownerId: identity.userId,
      createTime,
      expireTime,
      provider,
      clusterTemplate: template,
      services: solution.services,
      serviceDefs,
      numNodes: nodes.length,
      config,
      dnsSuffix: solution.dnsSuffix,
      // No other job can exist before the cluster does: the create is always plan 1.
      planId: formatPlanId(id, 1),
    };
    await actors.jobs.createCluster(cluster, nodes, prepared.plan, req.providerFields ?? {});
  } catch (err) {
    if (!(await deps.clusters.get(id))) await deps.usage.release(tenant.name, solution.nodes.length).catch(() => {});
    throw err;
  }
}
