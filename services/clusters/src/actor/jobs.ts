import { NotFoundError, planActionOf, type JsonObject, type Plan, type PlannedClusterAction, type PlanRequest } from "@corral/contracts";
import { jobCounterName } from "../adapters/counters.js";
import type { EngineDeps } from "../adapters/deps.js";
import type { Solver } from "../adapters/solver.js";
import type { Decision } from "../domain/actors.js";
import { isActionAllowed } from "../domain/cluster-machine.js";
import { newClusterRecord, type NewCluster } from "../domain/cluster-record.js";
import { jobRefusal, statusOf } from "../domain/cluster-status.js";
import { formatPlanId, clusterNodeIds } from "../domain/ids.js";
import type { JobRequest, PreparedJob } from "../domain/jobs.js";
import { newPlan, type NewPlan } from "../domain/plan-record.js";
import type { PlanActorAction } from "../domain/plan-steps.js";
import type { ClusterNode, ClusterRecord, PlanRecord } from "../domain/records.js";
import type { ClusterActor } from "./cluster-actor.js";
import type { Effects } from "./effects.js";
import type { PlanActor } from "./plan-actor.js";

/**
 * Jobs as the actors run them: a new cluster with its create job, and a job on an existing cluster, each a plan
 * stored where nothing reaches it until the cluster's write that points at it (the commit).
 */
export interface Jobs {
  /**
   * Creates a cluster: its create plan, its nodes and the request's provider fields side by side, then the cluster
   * actor, whose record commits all of it (nothing is reachable before it); then publishes stage 0.
   */
  createCluster(cluster: NewCluster, nodes: ClusterNode[], plan: Plan, providerFields: JsonObject): Promise<void>;
  /**
   * Plans a job on a cluster with `solver`: 409 when the cluster is busy or in a state that forbids it. Writes
   * nothing.
   */
  prepare(solver: Solver, cluster: ClusterRecord, request: JobRequest): Promise<PreparedJob>;
  /**
   * Starts a prepared job: stores the plan, then sends `job.started` (with the job's changes) to the cluster actor,
   * which makes the plan reachable, then publishes the plan's first stage. 409 when another job started since the
   * job was prepared. Answers the plan id.
   */
  start(job: PreparedJob): Promise<string>;
  /** Deletes a cluster whose lease ended (the reconciler): a delete job without provider fields. */
  expire(cluster: ClusterRecord): Promise<string>;
}

/** Plans a job: the planner's tasks for `action` on the nodes and services of `request`. */
export function planJob(solver: Solver, action: PlannedClusterAction, request: Omit<PlanRequest, "action">): Promise<Plan> {
  return solver.plan({ ...request, action: planActionOf(action) });
}

export interface JobsParts {
  clusters: ClusterActor;
  plans: PlanActor;
  effects: Effects;
}

export function createJobs(deps: EngineDeps, { clusters, plans, effects }: JobsParts): Jobs {
  /**
   * Stores a job's plan actor, not yet reachable from its cluster. Answers the plan with the actions its start
   * decided (publish stage 0, or finish at once when empty), to be carried out once the cluster points at it.
   */
  const createPlan = async (plan: Omit<NewPlan, "createTime">): Promise<Decision<PlanRecord, PlanActorAction>> => {
    const start = newPlan({ ...plan, createTime: deps.now() });
    const created = await plans.create(start.input, start.recordOf, async (record) => {
      await deps.plans.create(record, start.stages);
      return true;
    });
    if (!created) throw new Error(`plan ${plan.id} could not be stored`);
    deps.metrics.planStarted(created.record.action);
    // An empty plan ends at its start; every other plan ends in a later write (effects.deliverToPlan).
    for (const a of created.actions) if (a.type === "planFinished") deps.metrics.planFinished(created.record.action, a.outcome);
    return created;
  };

  const jobs: Jobs = {
    async createCluster(cluster, nodes, plan, providerFields) {
      const { id, planId } = cluster;
      // Nothing written before the cluster record is reachable: these writes need no order among themselves.
      const [started] = await Promise.all([
        createPlan({ id: planId, cluster, action: "cluster_create", plan, startedBy: cluster.ownerId }),
        deps.nodes.putNew(id, nodes),
        deps.credentials.put(id, planId, providerFields, cluster.createTime),
      ]);
      const created = await clusters.create(
        { planId },
        (actor) => newClusterRecord(cluster, actor),
        (record) => deps.clusters.create(record),
      );
      if (!created) throw new Error(`cluster id ${id} is already taken`);
      await effects.ofCluster(created.record, created.actions);
      await effects.ofPlan(started.record, started.actions, { known: { cluster: created.record, nodes, credentials: providerFields } });
    },

    async prepare(solver, cluster, request) {
      if (!isActionAllowed(statusOf(cluster), request.action)) throw jobRefusal(cluster, request.action);
      const nodes = await deps.nodes.getMany(cluster.id, clusterNodeIds(cluster));
      const added = request.addedNodes ?? [];
      const plan = await planJob(solver, request.action, {
        nodes: [...nodes, ...added].map((n) => ({ id: n.id, services: request.nodeServices?.[n.id] ?? n.services })),
        services: request.changes?.serviceDefs ?? cluster.serviceDefs,
        ...(request.service !== undefined ? { service: request.service } : {}),
        ...(request.addedServices !== undefined ? { addedServices: request.addedServices } : {}),
        ...(added.length > 0 ? { addedNodes: added.map((n) => n.id) } : {}),
        ...(request.removedNodes !== undefined ? { removedNodes: request.removedNodes.map((n) => n.id) } : {}),
        ...(request.unreachableNodes !== undefined ? { unreachableNodes: request.unreachableNodes } : {}),
        ...(request.changedNodes !== undefined ? { changedNodes: request.changedNodes } : {}),
        ...(request.restart !== undefined ? { restart: request.restart } : {}),
        ...(request.rolling !== undefined ? { rolling: request.rolling, template: cluster.clusterTemplate } : {}),
        // Services already running keep running: neither adding a service nor restarting one starts its
        // dependencies again, since none of them was stopped (docs/decisions.md, Adding or restarting a service
        // leaves its dependencies alone).
        options: { startUnplannedDependencies: false },
      });
      return { cluster, request, nodes, plan };
    },

    async start({ cluster, request, plan: planned }) {
      // A number of its own per attempt: racing requests never write to the same plan (only one wins below).
      // Plan 1 is the create's; the per-cluster counter numbers the jobs after it.
      const planId = formatPlanId(cluster.id, 1 + (await deps.counters.next(jobCounterName(cluster.id))));
      const plan = await createPlan({
        id: planId,
        cluster,
        action: request.action,
        plan: planned,
        ...(request.nodeServices ? { nodeServices: request.nodeServices } : {}),
        ...(request.startedBy !== undefined ? { startedBy: request.startedBy } : {}),
      });
      // Before the write that makes the plan reachable, so its tasks find them; a plan never started leaves them
      // to the reconciler's sweep when the removal below does not happen.
      await deps.credentials.put(cluster.id, planId, request.providerFields ?? {}, deps.now());
      // New nodes are no node of the cluster until the write below counts them: a job refused there leaves them
      // unread, and the next attempt writes the same ids again.
      if (request.addedNodes) await deps.nodes.putAdded(cluster.id, request.addedNodes);
      try {
        // Another operation may have started since the caller read the cluster: the actor refuses it then (409).
        const started = await effects.deliverToCluster(cluster.id, [
          {
            type: "job.started",
            action: request.action,
            planId,
            ...(request.changes ? { changes: request.changes } : {}),
            ...(request.removedNodes ? { leavingNodenums: request.removedNodes.map((n) => n.nodenum) } : {}),
            ...(request.leavingServices?.length ? { leavingServices: request.leavingServices } : {}),
          },
        ]);
        if (!started) throw new NotFoundError("cluster", cluster.id);
      } catch (err) {
        await deps.credentials.purge(cluster.id, planId).catch(() => {});
        throw err;
      }
      await effects.ofPlan(plan.record, plan.actions);
      return planId;
    },

    expire: async (cluster) => jobs.start(await jobs.prepare(deps.solver, cluster, { action: "cluster_delete" })),
  };
  return jobs;
}
