import { NotFoundError, type JsonObject, type Plan, type PlannedClusterAction } from "@corral/contracts";
import { jobCounterName } from "../adapters/counters.js";
import type { Solver } from "../adapters/solver.js";
import { isActionAllowed, type JobChanges } from "../domain/cluster-machine.js";
import { jobRefusal, statusOf } from "../domain/cluster-status.js";
import { formatPlanId, nodeIdsOf } from "../domain/ids.js";
import type { ClusterNode, ClusterRecord } from "../domain/records.js";
import type { OperationContext } from "./context.js";
import { createJobPlan, planJob } from "./plan-job.js";
import { checkProviderFields } from "./provider-fields.js";

/** What an operation on an existing cluster asks for. */
export interface JobRequest {
  action: PlannedClusterAction;
  /** For single-service start/stop/restart. */
  service?: string;
  /** For add_services: the services added and the nodes' services after the change. */
  addedServices?: string[];
  nodeServices?: Record<string, string[]>;
  /** Changes made to the cluster record in the same write that starts the job (config, services). */
  changes?: JobChanges;
  /**
   * Provider fields the request gave, checked by {@link prepareJob}: kept for this job's tasks until its plan ends.
   * Absent for a job nobody asked for (a delete at lease expiry), which needs none and gets none.
   */
  providerFields?: JsonObject;
}

/** A job checked and planned, nothing of it stored yet: what {@link startJob} writes and a dry run answers. */
export interface PreparedJob {
  cluster: ClusterRecord;
  request: JobRequest;
  /** The cluster's nodes as stored (before the job; `request.nodeServices` has their services after it). */
  nodes: ClusterNode[];
  plan: Plan;
}

/**
 * The checks and the plan of a job on a cluster, with `solver`: 400 when the request's provider fields are missing
 * or not the user's to give, 409 when the cluster is busy or in the wrong state. Writes nothing.
 */
export async function prepareJob(ctx: OperationContext, solver: Solver, cluster: ClusterRecord, request: JobRequest): Promise<PreparedJob> {
  if (request.providerFields !== undefined) await checkProviderFields(ctx.deps.tenancy, cluster.provider, request.providerFields);
  if (!isActionAllowed(statusOf(cluster), request.action)) throw jobRefusal(cluster, request.action);
  const nodes = await ctx.deps.nodes.getMany(cluster.id, nodeIdsOf(cluster.id, cluster.numNodes));
  const plan = await planJob(solver, request.action, {
    nodes: nodes.map((n) => ({ id: n.id, services: request.nodeServices?.[n.id] ?? n.services })),
    services: request.changes?.serviceDefs ?? cluster.serviceDefs,
    ...(request.service !== undefined ? { service: request.service } : {}),
    ...(request.addedServices !== undefined ? { addedServices: request.addedServices } : {}),
    // Services already running keep running: neither adding a service nor restarting one starts its dependencies
    // again, since none of them was stopped (docs/decisions.md, Adding or restarting a service leaves its
    // dependencies alone).
    options: { startUnplannedDependencies: false },
  });
  return { cluster, request, nodes, plan };
}

/**
 * Starts a prepared job: stores the plan, then sends `job.started` (with the job's changes) to the cluster actor,
 * which makes the plan reachable, then publishes the plan's first stage. 409 when another job started since the
 * job was prepared. Answers the plan id.
 */
export async function startJob(ctx: OperationContext, { cluster, request, plan: planned }: PreparedJob): Promise<string> {
  const { deps, actors } = ctx;
  // A number of its own per attempt: racing requests never write to the same plan (only one wins below).
  // Plan 1 is the create's; the per-cluster counter numbers the jobs after it.
  const planId = formatPlanId(cluster.id, 1 + (await deps.counters.next(jobCounterName(cluster.id))));
  const plan = await createJobPlan(
    ctx,
    cluster,
    planId,
    request.action,
    planned,
    request.nodeServices ? { nodeServices: request.nodeServices } : {},
  );
  // Before the write that makes the plan reachable, so its tasks find them; a plan never started leaves them
  // to the reconciler's sweep when the removal below does not happen.
  await deps.credentials.put(cluster.id, planId, request.providerFields ?? {}, deps.now());
  try {
    // Another operation may have started since the caller read the cluster: the actor refuses it then (409).
    const started = await actors.effects.deliverToCluster(cluster.id, [
      { type: "job.started", action: request.action, planId, ...(request.changes ? { changes: request.changes } : {}) },
    ]);
    if (!started) throw new NotFoundError("cluster", cluster.id);
  } catch (err) {
    await deps.credentials.purge(cluster.id, planId).catch(() => {});
    throw err;
  }
  await actors.effects.ofPlan(plan.record, plan.actions);
  return planId;
}
