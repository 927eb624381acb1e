import { planAction, type PlanRequest } from "@corral/solver";
import { ConflictError, NotFoundError, type Identity, type JsonObject, type Service } from "@corral/shared";
import { accepts, applyEvents, startActor, type ActorAction } from "../domain/actors.js";
import {
  clusterMachine,
  isActionAllowed,
  type ClusterAction,
  type ClusterContext,
  type ClusterStatus,
} from "../domain/cluster-machine.js";
import { formatPlanId, nodeIdsOf } from "../domain/ids.js";
import {
  PLAN_MACHINE_VERSION,
  isPlanEnded,
  planMachine,
  type Dispatch,
  type PlanContext,
  type PlanEvent,
} from "../domain/plan-machine.js";
import type { ClusterRecord, PlanRecord, StoredTask } from "../domain/records.js";
import { jobCounterName } from "../adapters/counters.js";
import type { EngineDeps } from "./deps.js";
import { DispatchMemory } from "./dispatch-memory.js";
import { createDispatcher, type Dispatcher, type KnownState } from "./dispatcher.js";

/** What an operation on an existing cluster asks for. */
/** Every cluster action but solving, which plans no tasks. */
export type PlannedAction = Exclude<ClusterAction, "solve_layout">;

export interface JobRequest {
  action: PlannedAction;
  /** For single-service start/stop/restart. */
  service?: string;
  /** For add_services: the services added and the nodes' services after the change. */
  addedServices?: string[];
  nodeServices?: Record<string, string[]>;
  /** Changes made to the cluster record in the same write that starts the job (config, services). */
  mutate?: (cluster: ClusterRecord) => ClusterRecord;
  /** Provider fields the request gave: kept for this job's tasks until its plan ends. */
  providerFields?: JsonObject;
}

export interface Engine {
  dispatcher: Dispatcher;
  /** Applies events to a plan actor (compare-and-set), then carries out what it decided. */
  applyPlanEvents(clusterId: string, planId: string, events: PlanEvent[]): Promise<void>;
  /** Tells the cluster actor its job ended. */
  finishJob(clusterId: string, planId: string, outcome: "succeeded" | "failed", steps: ClusterRecord["progress"]): Promise<void>;
  /** Plans and starts an operation on a cluster; 409 when the cluster is busy or in the wrong state. */
  startJob(cluster: ClusterRecord, request: JobRequest): Promise<string>;
  /** Writes a new plan record for a cluster (before the cluster points at it). */
  createPlan(cluster: ClusterRecord, planId: string, action: PlannedAction, planRequest: Omit<PlanRequest, "action">, extra?: Partial<PlanRecord>): Promise<PlanRecord>;
  /** Carries out a plan's start actions (publish stage 0, or finish an empty plan). */
  runPlanActions(plan: PlanRecord, actions: ActorAction[], known?: KnownState): Promise<void>;
}

export const statusOf = (cluster: ClusterRecord) => cluster.actor.value as ClusterStatus;

/** The cluster as the caller may see it: another user's cluster is a 404 (an admin sees the tenant's). */
export function visibleCluster(cluster: ClusterRecord | undefined, identity: Identity, id: string): ClusterRecord {
  if (!cluster || cluster.tenant !== identity.tenant || (identity.role === "user" && cluster.ownerId !== identity.userId)) {
    throw new NotFoundError("cluster", id);
  }
  return cluster;
}

function conflictFor(cluster: ClusterRecord, action: ClusterAction): ConflictError {
  const status = statusOf(cluster);
  if (status === "pending") {
    return new ConflictError(`cluster ${cluster.id} is busy with ${cluster.actor.context.action}; try again when it finishes`, { status }, "cluster_busy");
  }
  return new ConflictError(`cluster ${cluster.id} is ${status}; ${action} is not allowed in that state`, { status }, "wrong_state");
}

export function createEngine(deps: EngineDeps): Engine {
  const memory = new DispatchMemory();
  const dispatcher = createDispatcher(deps, memory);

  const runPlanActions = async (plan: PlanRecord, actions: ActorAction[], known?: KnownState): Promise<void> => {
    const dispatches = actions.filter((a) => a.type === "publishTasks").flatMap((a) => (a.params as { tasks: Dispatch[] }).tasks);
    const stages = actions.filter((a) => a.type === "publishStage").map((a) => (a.params as { stage: number }).stage);
    if (dispatches.length > 0 || stages.length > 0) {
      const events = await dispatcher.publish(plan, dispatches, stages, known ? { known } : {});
      if (events.length > 0) await engine.applyPlanEvents(plan.clusterId, plan.id, events);
    }
    for (const a of actions) {
      if (a.type === "planFinished") {
        memory.forget(plan);
        // No task of the plan runs any more: its provider fields go (a crash here leaves them to the reconciler).
        await deps.credentials.purge(plan.clusterId, plan.id);
        await engine.finishJob(plan.clusterId, plan.id, (a.params as { outcome: "succeeded" | "failed" }).outcome, stepsOf(plan));
      }
    }
  };

  const engine: Engine = {
    dispatcher,
    runPlanActions,

    async applyPlanEvents(clusterId, planId, events) {
      const results = events.filter((e) => e.type === "task.result").length;
      let actions: ActorAction[] = [];
      let record: PlanRecord | undefined;
      let before = 0;
      await deps.plans.modify(clusterId, planId, (current) => {
        actions = [];
        record = undefined;
        if (!current) return { keep: true };
        const r = applyEvents<PlanContext, PlanEvent>(planMachine, current.value.actor, events);
        // Results are counted even when stale, while the plan runs: the count tells whether nodes changed.
        const running = !isPlanEnded(current.value.actor);
        if (!r.changed && !(running && results > 0)) return { keep: true };
        actions = r.actions;
        before = current.value.resultsApplied ?? 0;
        record = { ...current.value, actor: r.persisted, resultsApplied: before + (running ? results : 0) };
        return { put: record };
      });
      if (!record) return;
      memory.resultsApplied(record, before, record.resultsApplied ?? 0);
      await runPlanActions(record, actions);
    },

    async finishJob(clusterId, planId, outcome, steps) {
      let release: ClusterRecord | undefined;
      await deps.clusters.modify(clusterId, (current) => {
        release = undefined;
        if (!current) return { keep: true };
        const event = outcome === "succeeded" ? { type: "job.succeeded" as const, planId } : { type: "job.failed" as const, planId };
        const r = applyEvents<ClusterContext, typeof event>(clusterMachine, current.value.actor, [event]);
        if (!r.changed) return { keep: true };
        const next: ClusterRecord = { ...current.value, actor: r.persisted, progress: steps };
        if (r.persisted.value === "terminated" && !next.released) {
          next.released = true;
          release = next;
        }
        return { put: next };
      });
      if (release) {
        // After the write, so a crash can at worst leak a reservation, which the usage recount repairs.
        await deps.usage.release(release.tenant, release.numNodes);
        await deps.credentials.wipe(release.id);
      }
    },

    async createPlan(cluster, planId, action, planRequest, extra = {}) {
      const plan = planAction({ ...planRequest, action });
      const stages: StoredTask[][] = plan.stages.map((stage) =>
        stage.map((t) => ({ taskName: t.taskName, nodeId: t.nodeId, service: t.service })),
      );
      const { persisted } = startActor<PlanContext>(planMachine, PLAN_MACHINE_VERSION, {
        stageSizes: stages.map((s) => s.length),
        rollbackConfirm: action === "cluster_create",
        at: deps.now(),
      });
      const record: PlanRecord = {
        id: planId,
        clusterId: cluster.id,
        tenant: cluster.tenant,
        action: plan.action,
        createTime: deps.now(),
        stageSizes: stages.map((s) => s.length),
        actor: persisted,
        ...extra,
      };
      await deps.plans.create(record, stages);
      return record;
    },

    async startJob(cluster, request) {
      if (!isActionAllowed(statusOf(cluster), request.action)) throw conflictFor(cluster, request.action);
      // A number of its own per attempt: racing requests never write to the same plan (only one wins below).
      // Plan 1 is the create's; the per-cluster counter numbers the jobs after it.
      const planId = formatPlanId(cluster.id, 1 + (await deps.counters.next(jobCounterName(cluster.id))));
      const changed = request.mutate ? request.mutate(cluster) : cluster;
      const nodes = (await deps.nodes.getMany(cluster.id, nodeIdsOfCluster(cluster))).map((n) => ({
        id: n.id,
        services: request.nodeServices?.[n.id] ?? n.services,
      }));
      const defs: Service[] = changed.serviceDefs;
      const plan = await engine.createPlan(
        cluster,
        planId,
        request.action,
        {
          nodes,
          services: defs,
          ...(request.service !== undefined ? { service: request.service } : {}),
          ...(request.addedServices !== undefined ? { addedServices: request.addedServices } : {}),
          // Services already running keep running: neither adding a service nor restarting one re-starts its
          // dependencies (Coopr did both; none of them was stopped).
          options: { startUnplannedDependencies: false },
        },
        request.nodeServices ? { nodeServices: request.nodeServices } : {},
      );
      const event = { type: "job.started" as const, action: request.action, planId };
      // Before the write that makes the plan reachable, so its tasks find them; a plan never started leaves them
      // to the reconciler's sweep when the removal below does not happen.
      await deps.credentials.put(cluster.id, planId, request.providerFields ?? {}, deps.now());
      try {
        await deps.clusters.modify(cluster.id, (current) => {
          if (!current) throw new NotFoundError("cluster", cluster.id);
          // Another operation may have started since the caller read the cluster.
          if (!accepts(clusterMachine, current.value.actor, event)) {
            throw conflictFor(current.value, request.action);
          }
          const base = request.mutate ? request.mutate(current.value) : current.value;
          const r = applyEvents<ClusterContext, typeof event>(clusterMachine, base.actor, [event]);
          return { put: { ...base, actor: r.persisted, jobs: [...base.jobs, planId] } };
        });
      } catch (err) {
        await deps.credentials.purge(cluster.id, planId).catch(() => {});
        throw err;
      }
      const { actions } = startActorActions(plan);
      await runPlanActions(plan, actions);
      return planId;
    },
  };
  return engine;
}

/** Total and completed tasks of a plan. */
export const stepsOf = (plan: PlanRecord) => ({
  stepstotal: plan.stageSizes.reduce((a, b) => a + b, 0),
  stepscompleted: plan.actor.context.completed,
});

const nodeIdsOfCluster = (cluster: ClusterRecord) => nodeIdsOf(cluster.id, cluster.numNodes);

/** The actions a freshly started plan decided (publish stage 0, or finish at once when empty). */
export function startActorActions(plan: PlanRecord): { actions: ActorAction[] } {
  const actions: ActorAction[] = [];
  const c = plan.actor.context;
  if (c.unpublished?.stages.includes(0)) actions.push({ type: "publishStage", params: { stage: 0 } });
  if (plan.actor.value === "succeeded") actions.push({ type: "planFinished", params: { outcome: "succeeded" } });
  return { actions };
}

