import { solveLayout, validateMacros } from "@corral/solver";
import {
  BadRequestError,
  NotFoundError,
  type ClusterTemplate,
  type Identity,
  type Json,
  type JsonObject,
  type Service,
} from "@corral/contracts";
import { formatClusterId, formatPlanId } from "../domain/ids.js";
import { leaseExpiry } from "../domain/lease.js";
import type { ClusterNode, ClusterRecord } from "../domain/records.js";
import type { CreateClusterRequest } from "../domain/requests.js";
import type { OperationContext } from "./context.js";
import { createJobPlan } from "./plan-job.js";
import { requireProviderFields } from "./provider-fields.js";

/** Largest cluster one request may create. */
export const MAX_CLUSTER_SIZE = 10_000;

function findIn<T extends { name: string }>(list: readonly T[], name: string): T | undefined {
  return list.find((e) => e.name === name);
}

/**
 * Creates a cluster: validates and solves before answering (DESIGN.md "Decisions"), reserves quota, writes
 * nodes and the create plan, then commits by creating the cluster actor, and dispatches the first stage.
 * A crash before the commit leaves only unreachable keys under an id never used again.
 */
export async function createCluster(ctx: OperationContext, identity: Identity, req: CreateClusterRequest): Promise<string> {
  const { deps, actors } = ctx;
  if (req.numMachines > MAX_CLUSTER_SIZE) {
    throw new BadRequestError(`numMachines must be at most ${MAX_CLUSTER_SIZE} (got ${req.numMachines})`, { field: "numMachines" });
  }
  // Independent reads run side by side; the tenant's absence is reported before anything the catalog says.
  const catalogRead = deps.tenancy.catalog(identity.tenant);
  catalogRead.catch(() => {});
  const record = await deps.tenancy.tenant(identity.tenant);
  if (!record) throw new NotFoundError("tenant", identity.tenant);
  const { tenant } = record;
  const catalog = await catalogRead;
  const template: ClusterTemplate | undefined = findIn(catalog.clustertemplates, req.clusterTemplate);
  if (!template) throw new BadRequestError(`cluster template ${req.clusterTemplate} does not exist`, { field: "clusterTemplate" });
  const providerName = req.provider ?? template.defaults.provider;
  const provider = findIn(catalog.providers, providerName);
  if (!provider) throw new BadRequestError(`provider ${providerName} does not exist`, { field: "provider" });
  const now = deps.now();
  const expireTime = leaseExpiry(template, req.initialLeaseDuration, now);
  const config = (req.config ?? template.defaults.config) as JsonObject;
  validateMacros(config as Json);
  const [, clusterNumber] = await Promise.all([
    requireProviderFields(deps.tenancy, provider, req.providerFields ?? {}),
    deps.counters.next("clusters", { block: 32 }),
  ]);
  const id = formatClusterId(clusterNumber);
  const solution = solveLayout({
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
    const serviceDefs: Service[] = solution.services
      .map((name) => findIn(catalog.services, name))
      .filter((s): s is Service => s !== undefined);
    // No other job can exist before the cluster does: the create is always plan 1.
    const planId = formatPlanId(id, 1);
    const cluster = (actor: ClusterRecord["actor"]): ClusterRecord => ({
      id,
      tenant: identity.tenant,
      name: req.name,
      description: req.description ?? "",
      ownerId: identity.userId,
      createTime: now,
      expireTime,
      actor,
      provider,
      clusterTemplate: template,
      services: solution.services,
      serviceDefs,
      numNodes: nodes.length,
      config,
      dnsSuffix: solution.dnsSuffix,
      jobs: [planId],
      progress: { stepstotal: 0, stepscompleted: 0 },
    });
    // Nothing written before the cluster record is reachable: these writes need no order among themselves.
    const [plan] = await Promise.all([
      createJobPlan(ctx, { id, tenant: identity.tenant }, planId, "cluster_create", {
        nodes: nodes.map((n) => ({ id: n.id, services: n.services })),
        services: serviceDefs,
      }),
      deps.nodes.putMany(nodes),
      deps.credentials.put(id, planId, req.providerFields ?? {}, now),
    ]);
    const created = await actors.clusters.create({ planId }, cluster, (record) => deps.clusters.create(record));
    if (!created) throw new Error(`cluster id ${id} is already taken`);
    await actors.effects.ofCluster(created.record, created.actions);
    await actors.effects.ofPlan(plan.record, plan.actions, {
      known: { cluster: created.record, nodes, credentials: req.providerFields ?? {} },
    });
    return id;
  } catch (err) {
    if (!(await deps.clusters.get(id))) await deps.usage.release(tenant.name, solution.nodes.length).catch(() => {});
    throw err;
  }
}
