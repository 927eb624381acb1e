import type { DryRunResult, Identity, JobStarted, JsonObject, RollingRequest } from "@corral/contracts";
import type { Solver } from "../adapters/solver.js";
import type { ClusterRecord } from "../domain/records.js";
import type { CreateClusterRequest } from "../domain/requests.js";
import { prepareAddNodes, startWithNodes, type AddNodesRequest } from "./add-nodes.js";
import { prepareRemoveNodes, type RemoveNodesRequest } from "./remove-nodes.js";
import { prepareReplaceNode, prepareReplacement, type ReplaceNodeRequest } from "./replace-node.js";
import { prepareAddServices, type AddServicesRequest } from "./add-services.js";
import { prepareConfigure, type ConfigureRequest } from "./configure-cluster.js";
import type { OperationContext } from "./context.js";
import { createCluster, dryRunCreate } from "./create-cluster.js";
import { prepareDelete } from "./delete-cluster.js";
import { jobDryRun } from "./dry-run.js";
import { extendLease } from "./extend-lease.js";
import { purgeTenant, type PurgeProgress } from "./purge-tenant.js";
import { prepareRunServices, type ServicesAction } from "./run-services.js";
import type { PreparedJob } from "./start-job.js";

/**
 * The job operations, each answering `Result`: started (the cluster and the plan to follow) or dry-run (what it
 * would do).
 */
export interface JobOperations<Result> {
  delete(identity: Identity, id: string, providerFields: JsonObject): Promise<Result>;
  configure(identity: Identity, id: string, req: ConfigureRequest): Promise<Result>;
  addServices(identity: Identity, id: string, req: AddServicesRequest): Promise<Result>;
  addNodes(identity: Identity, id: string, req: AddNodesRequest): Promise<Result>;
  removeNodes(identity: Identity, id: string, req: RemoveNodesRequest): Promise<Result>;
  replaceNode(identity: Identity, id: string, nodeId: string, req: ReplaceNodeRequest): Promise<Result>;
  runServices(
    identity: Identity,
    id: string,
    action: ServicesAction,
    service: string | undefined,
    providerFields: JsonObject,
    rolling?: RollingRequest,
  ): Promise<Result>;
}

/** What the clusters service's requests do to clusters; handlers decode a request and call one of these. */
export interface ClusterOperations extends JobOperations<JobStarted> {
  create(identity: Identity, req: CreateClusterRequest): Promise<string>;
  extendLease(identity: Identity, id: string, expireTime: number): Promise<void>;
  /**
   * Replaces a node nobody asked to replace (automatic repair, engine/repair/): as `replaceNode`, without provider
   * fields. Answers the plan id.
   */
  repairNode(cluster: ClusterRecord, nodeId: string): Promise<string>;
  /** Removes what this service keeps for a deleted tenant, a batch of clusters per call (internal, from tenancy). */
  purgeTenant(tenant: string): Promise<PurgeProgress>;
  /**
   * The same requests answered instead of carried out (`?dryRun=true`): the same checks, the layout and plan from
   * the solver service, nothing written.
   */
  dryRun: JobOperations<DryRunResult> & { create(identity: Identity, req: CreateClusterRequest): Promise<DryRunResult> };
}

/** A prepared job as the request of `identity`'s user (its plan records who started it). */
const startedBy = (identity: Identity, job: PreparedJob): PreparedJob => ({ ...job, request: { ...job.request, startedBy: identity.userId } });

/** Each job operation prepared with `solver` as the request of its identity's user, then finished by `done`. */
function jobOperations<Result>(ctx: OperationContext, solver: Solver, done: (job: PreparedJob) => Promise<Result>): JobOperations<Result> {
  const finish = (identity: Identity, job: PreparedJob) => done(startedBy(identity, job));
  return {
    delete: async (identity, id, providerFields) => finish(identity, await prepareDelete(ctx, solver, identity, id, providerFields)),
    configure: async (identity, id, req) => finish(identity, await prepareConfigure(ctx, solver, identity, id, req)),
    addServices: async (identity, id, req) => finish(identity, await prepareAddServices(ctx, solver, identity, id, req)),
    addNodes: async (identity, id, req) => finish(identity, await prepareAddNodes(ctx, solver, identity, id, req)),
    removeNodes: async (identity, id, req) => finish(identity, await prepareRemoveNodes(ctx, solver, identity, id, req)),
    replaceNode: async (identity, id, nodeId, req) => finish(identity, await prepareReplaceNode(ctx, solver, identity, id, nodeId, req)),
    runServices: async (identity, id, action, service, providerFields, rolling) =>
      finish(identity, await prepareRunServices(ctx, solver, identity, id, action, service, providerFields, rolling)),
  };
}

export function createClusterOperations(ctx: OperationContext): ClusterOperations {
  return {
    ...jobOperations(ctx, ctx.deps.solver, async (job) => ({
      clusterId: job.cluster.id,
      planId: await startWithNodes(ctx, job),
    })),
    create: (identity, req) => createCluster(ctx, identity, req),
    extendLease: (identity, id, expireTime) => extendLease(ctx, identity, id, expireTime),
    purgeTenant: (tenant) => purgeTenant(ctx, tenant),
    repairNode: async (cluster, nodeId) => startWithNodes(ctx, await prepareReplacement(ctx, ctx.deps.solver, cluster, nodeId, {})),
    dryRun: {
      ...jobOperations(ctx, ctx.deps.solver, async (job) => jobDryRun(job)),
      create: (identity, req) => dryRunCreate(ctx, ctx.deps.solver, identity, req),
    },
  };
}

export type { AddNodesRequest, AddServicesRequest, RemoveNodesRequest, ReplaceNodeRequest, ConfigureRequest, OperationContext, PurgeProgress, ServicesAction };
