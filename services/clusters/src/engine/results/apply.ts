import type { TaskEndedEvent, TaskResult } from "@corral/contracts";
import { mapLimit } from "@corral/shared";
import type { ReadingDeps } from "../../adapters/deps.js";
import type { NodeChange } from "../../adapters/node-store.js";
import { taskIndexOf } from "../../domain/ids.js";
import { nodeEventOf, nodeEventTypeOf, type NodeEvent } from "../../domain/node-events.js";
import { applyResultToNode } from "../../domain/node-results.js";
import type { PlanEvent } from "../../domain/plan-machine.js";
import { taskPositionOf } from "../../domain/plan-steps.js";
import type { PlanRecord, PlanRef } from "../../domain/records.js";
import { taskEndedEvent } from "../../domain/stream-events.js";
import { requestSecretsOf, withoutRequestSecrets } from "./redaction.js";

/** Where applied results go: the plan actors (src/actor/ provides it; service.ts wires it in). */
export interface PlanDelivery {
  /**
   * Sends events to a plan, then carries out what it decided. `ended`: the `task.ended` events of the successful
   * results among `events`, announced with the plan's write.
   */
  deliverToPlan(ref: PlanRef, events: readonly PlanEvent[], ended?: readonly TaskEndedEvent[]): Promise<void>;
}

/** A result made ready to apply: redacted, its task's service found, a failure announced. */
export interface PreparedResult {
  /** Without the request's provider fields in its output. */
  result: TaskResult;
  /** The task's global index in its plan; undefined for a result of no task of the plan. */
  index: number | undefined;
  service: string;
  showedSecrets: boolean;
  /** A success's `task.ended`, announced with the plan write that records it. */
  ended?: TaskEndedEvent;
}

/**
 * Lookups of the parts of plans and clusters that never change, and of a plan's secret request fields: mostly
 * served from memory, asked once per plan while they last (the consumer renews them after each batch).
 */
export interface ResultLookups {
  planOf(r: TaskResult): Promise<PlanRecord | undefined>;
  ownerOf(clusterId: string): Promise<string>;
  requestSecrets(r: TaskResult): Promise<string[]>;
}

export function newResultLookups(deps: ReadingDeps): ResultLookups {
  const plans = new Map<string, Promise<PlanRecord | undefined>>();
  const owners = new Map<string, Promise<string>>();
  const secrets = new Map<string, Promise<string[]>>();
  const once = <T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>) => {
    let p = cache.get(key);
    if (!p) cache.set(key, (p = load()));
    return p;
  };
  return {
    planOf: (r) => once(plans, `${r.clusterId}/${r.planId}`, () => deps.plans.fixedPartsOf(r.clusterId, r.planId)),
    ownerOf: (clusterId) => once(owners, clusterId, () => deps.clusters.fixedPartsOf(clusterId).then((c) => c?.ownerId ?? "")),
    requestSecrets: (r) => once(secrets, `${r.clusterId}/${r.planId}`, () => requestSecretsOf(deps, r.clusterId, r.planId)),
  };
}

/** Applies task results: each to its node (idempotent per dispatch), then every plan's results to its actor. */
export interface ResultApplier {
  /**
   * Redacts a result, finds its task's service and announces a failure right away: clients following the cluster
   * see it without waiting for the batches before it to be applied (its output explains the retry that follows).
   */
  prepare(raw: TaskResult, lookups: ResultLookups): Promise<PreparedResult>;
  /** Applies prepared results: to their nodes, then (their node events published) to their plans. */
  applyBatch(batch: readonly PreparedResult[], lookups: ResultLookups): Promise<void>;
}

export function createResultApplier(deps: ReadingDeps, delivery: PlanDelivery): ResultApplier {
  /** The planned service of a task, for the node's action history. */
  const serviceOf = async (plan: PlanRecord, index: number) => {
    const { stage, position } = taskPositionOf(plan, index);
    return (await deps.plans.stageTask(plan, stage, position))?.service ?? "";
  };

  /** Merges results into their nodes (idempotent per dispatch): one write per cluster where its nodes are grouped. */
  const applyToNodes = async (results: readonly PreparedResult[]) => {
    const byCluster = new Map<string, Map<string, NodeChange>>();
    for (const { result: r, service } of results) {
      let changes = byCluster.get(r.clusterId);
      if (!changes) byCluster.set(r.clusterId, (changes = new Map()));
      const before = changes.get(r.nodeId);
      changes.set(r.nodeId, (node) => {
        const earlier = before?.(node);
        return applyResultToNode(earlier ?? node, r, service) ?? earlier;
      });
    }
    await mapLimit([...byCluster], 64, ([clusterId, changes]) => deps.nodes.modifyMany(clusterId, changes));
  };

  return {
    async prepare(raw, lookups) {
      const result = await withoutRequestSecrets(raw, () => lookups.requestSecrets(raw));
      const index = taskIndexOf(result.planId, result.taskId);
      const plan = index === undefined ? undefined : await lookups.planOf(result);
      const service = plan && index !== undefined ? await serviceOf(plan, index) : "";
      const prepared: PreparedResult = { result, index, service, showedSecrets: result !== raw };
      if (index === undefined) return prepared;
      const ended = taskEndedEvent(result, service, deps.now());
      if (result.status === 0) prepared.ended = ended;
      else deps.publisher.publishClusterEvents([ended]);
      return prepared;
    },

    async applyBatch(batch, lookups) {
      const applicable = batch.filter((p): p is PreparedResult & { index: number } => p.index !== undefined);
      await applyToNodes(applicable);
      const byPlan = new Map<string, { clusterId: string; planId: string; events: PlanEvent[]; ended: TaskEndedEvent[] }>();
      const nodeEvents: NodeEvent[] = [];
      for (const { result: r, index, ended } of applicable) {
        const nodeEventType = nodeEventTypeOf(r);
        if (nodeEventType) nodeEvents.push(nodeEventOf(r, nodeEventType, await lookups.ownerOf(r.clusterId)));
        const key = `${r.clusterId}/${r.planId}`;
        let group = byPlan.get(key);
        if (!group) byPlan.set(key, (group = { clusterId: r.clusterId, planId: r.planId, events: [], ended: [] }));
        if (ended) group.ended.push(ended);
        deps.metrics.taskResult(r);
        const event: PlanEvent = { type: "task.result", index, dispatch: r.dispatch, taskName: r.taskName, ok: r.status === 0, at: deps.now() };
        if (r.stderr) event.message = r.stderr.slice(-500);
        group.events.push(event);
      }
      // Published on every delivery, not only the first: after a crash the same batch again is dropped by its
      // message id (a batch made up differently is stored again, and metrics records a repeated event only once).
      await deps.publisher.publishNodeEvents(nodeEvents);
      await mapLimit([...byPlan.values()], 16, (g) => delivery.deliverToPlan({ clusterId: g.clusterId, planId: g.planId }, g.events, g.ended));
    },
  };
}
