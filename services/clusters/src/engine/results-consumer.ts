import { jetstream, jetstreamManager, type JsMsg } from "@nats-io/jetstream";
import { streams, type TaskEndedEvent } from "@corral/contracts";
import { RESULTS_ACK_WAIT_MS, ensureResultsConsumer, resultsOf, type TaskResult } from "@corral/shared";
import { mapLimit } from "../adapters/buckets.js";
import type { NodeChange } from "../adapters/node-store.js";
import { taskIndexOf } from "../domain/ids.js";
import { nodeEventOf, nodeEventTypeOf, type NodeEvent } from "../domain/node-events.js";
import { applyResultToNode } from "../domain/node-results.js";
import { stagePositionOf, type PlanEvent } from "../domain/plan-machine.js";
import type { PlanRecord } from "../domain/records.js";
import { outputWithoutSecrets, secretsOf } from "../domain/secrets.js";
import { taskEndedEvent } from "../domain/stream-events.js";
import type { Effects } from "../actor/index.js";
import type { EngineDeps } from "./deps.js";

const BATCH = 256;
/**
 * After an idle wait, the first result waits this long for its siblings: a stage's results arrive within a few
 * milliseconds of each other, and applied together they cost their plan one write (and one progress event)
 * instead of one each.
 */
const LINGER_MS = 5;
/**
 * Batches applied at once: while one waits for its writes to be stored (an fsync each with `sync_interval:
 * always`), the next is applied. Two batches holding one plan's results are merged by compare-and-set.
 */
const BATCHES_IN_FLIGHT = 2;

export interface ResultsConsumer {
  stop(): Promise<void>;
}

/**
 * Reads task results in batches: a failure is announced as it arrives (`task.ended`); then, with its batch, each
 * result is merged into its node (idempotent per dispatch), every plan's results are applied to its actor in one
 * compare-and-set, whose `plan.progress` carries the successes' `task.ended` events (see `planWriteEvents`),
 * and the batch is acked. A crash before the ack redelivers the batch, which changes nothing the second time and
 * announces its results again (a repeated announcement is dropped by its message id).
 */
export async function startResultsConsumer(deps: EngineDeps, effects: Effects): Promise<ResultsConsumer> {
  const name = await ensureResultsConsumer(deps.nc);
  const consumer = await jetstream(deps.nc).consumers.get(streams.results, name);
  let running = true;

  /** The planned service of a task, for the node's action history. */
  const serviceOf = async (plan: PlanRecord, index: number) => {
    const { stage, position } = stagePositionOf(plan.actor.context, index);
    return (await deps.plans.stageTask(plan, stage, position))?.service ?? "";
  };

  /** A results message as received (one result, or a provisioner's batch): failures announced at once, applied with its batch. */
  interface Received {
    msg: JsMsg;
    prepared: Promise<Prepared[]>;
  }
  interface Prepared {
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
   * served from memory, asked once per plan until the batch being applied is done.
   */
  let lookups = newLookups();
  function newLookups() {
    const plans = new Map<string, Promise<PlanRecord | undefined>>();
    const owners = new Map<string, Promise<string>>();
    const secrets = new Map<string, Promise<string[]>>();
    const once = <T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>) => {
      let p = cache.get(key);
      if (!p) cache.set(key, (p = load()));
      return p;
    };
    return {
      planOf: (r: TaskResult) => once(plans, `${r.clusterId}/${r.planId}`, () => deps.plans.fixedPartsOf(r.clusterId, r.planId)),
      ownerOf: (clusterId: string) =>
        once(owners, clusterId, () => deps.clusters.fixedPartsOf(clusterId).then((c) => c?.ownerId ?? "")),
      requestSecrets: (r: TaskResult) => once(secrets, `${r.clusterId}/${r.planId}`, () => requestSecretsOf(r.clusterId, r.planId)),
    };
  }

  /**
   * Redacts a result, finds its task's service and announces a failure right away: clients following the cluster
   * see it without waiting for the batches before it to be applied (its output explains the retry that follows).
   */
  const prepare = async (raw: TaskResult): Promise<Prepared> => {
    const { planOf, requestSecrets } = lookups;
    // A failed task's output is kept: without the request's provider fields, which are not kept.
    const result = raw.status === 0 || (!raw.stdout && !raw.stderr) ? raw : outputWithoutSecrets(raw, await requestSecrets(raw));
    const index = taskIndexOf(result.planId, result.taskId);
    const plan = index === undefined ? undefined : await planOf(result);
    const service = plan && index !== undefined ? await serviceOf(plan, index) : "";
    const prepared: Prepared = { result, index, service, showedSecrets: result !== raw };
    if (index === undefined) return prepared;
    const ended = taskEndedEvent(result, service, deps.now());
    if (result.status === 0) prepared.ended = ended;
    else deps.publisher.publishClusterEvents([ended]);
    return prepared;
  };

  const receive = (msg: JsMsg): Received => {
    const prepared = Promise.resolve().then(() => Promise.all(resultsOf(msg.data).map(prepare)));
    // Awaited with its batch (which fails and is redelivered if this did).
    prepared.catch(() => {});
    return { msg, prepared };
  };

  /**
   * Every result received and not yet acked or handed back, in a batch or still queued behind one: progress acks
   * keep them all, or a slow spell (a busy machine, fsync on every write) would have the server deliver the queued
   * ones again, to this instance or another, and the repeats would make the spell longer.
   */
  const unsettled = new Set<JsMsg>();
  const progress = setInterval(() => {
    for (const m of unsettled) m.working();
  }, RESULTS_ACK_WAIT_MS / 3);
  progress.unref();

  const handleBatch = async (received: Received[]) => {
    const messages = received.map((r) => r.msg);
    let prepared: Prepared[][];
    try {
      prepared = await Promise.all(received.map((r) => r.prepared));
      await applyBatch(prepared.flat());
      for (const m of messages) {
        m.ack();
        unsettled.delete(m);
      }
    } finally {
      lookups = newLookups();
    }
    // The stored copy has them redacted; the raw result would otherwise keep them on the stream for days
    // (erased: overwritten on disk, not only marked deleted).
    if (prepared.some((results) => results.some((p) => p.showedSecrets))) {
      const jsm = await jetstreamManager(deps.nc);
      for (const [i, results] of prepared.entries()) {
        const seq = messages[i]?.seq;
        if (results.some((p) => p.showedSecrets) && seq !== undefined) await jsm.streams.deleteMessage(streams.results, seq, true).catch(() => {});
      }
    }
  };

  /** The secret values among the provider fields a plan's request gave. */
  const requestSecretsOf = async (clusterId: string, planId: string): Promise<string[]> => {
    const fields = await deps.credentials.get(clusterId, planId);
    if (Object.keys(fields).length === 0) return [];
    const cluster = await deps.clusters.fixedPartsOf(clusterId);
    return secretsOf(fields, cluster ? await deps.tenancy.providerType(cluster.provider.providertype) : undefined);
  };

  /** Applies a batch of prepared results: to their nodes, then (their node events published) to their plans. */
  const applyBatch = async (batch: Prepared[]): Promise<void> => {
    const { ownerOf } = lookups;
    const applicable = batch.filter((p): p is Prepared & { index: number } => p.index !== undefined);
    await applyToNodes(applicable);
    const byPlan = new Map<string, { clusterId: string; planId: string; events: PlanEvent[]; ended: TaskEndedEvent[] }>();
    const nodeEvents: NodeEvent[] = [];
    for (const { result: r, index, ended } of applicable) {
      const nodeEventType = nodeEventTypeOf(r);
      if (nodeEventType) nodeEvents.push(nodeEventOf(r, nodeEventType, await ownerOf(r.clusterId)));
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
    await mapLimit([...byPlan.values()], 16, (g) => effects.deliverToPlan({ clusterId: g.clusterId, planId: g.planId }, g.events, g.ended));
  };

  /** Merges results into their nodes (idempotent per dispatch): one write per cluster where its nodes are grouped. */
  const applyToNodes = async (results: readonly Prepared[]) => {
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

  // consume() streams messages as they come; batches are whatever has arrived while the last batch ran.
  const stream = await consumer.consume({ max_messages: BATCH * 2 });
  const queue: Received[] = [];
  let wake: (() => void) | undefined;
  const feeding = (async () => {
    for await (const m of stream) {
      unsettled.add(m);
      queue.push(receive(m));
      wake?.();
    }
  })().catch((err: unknown) => deps.log.error("results stream ended", { err }));

  const inFlight = new Set<Promise<void>>();
  const loop = (async () => {
    let idle = false;
    while (running) {
      if (queue.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 500);
        });
        wake = undefined;
        idle = true;
        continue;
      }
      if (idle && queue.length < BATCH) await new Promise((resolve) => setTimeout(resolve, LINGER_MS));
      idle = false;
      const batch = queue.splice(0, BATCH);
      const handled = handleBatch(batch).catch((err: unknown) => {
        deps.log.warn("results batch failed; it will be redelivered", { err });
        for (const r of batch) {
          r.msg.nak(1000);
          unsettled.delete(r.msg);
        }
      });
      inFlight.add(handled);
      void handled.finally(() => {
        inFlight.delete(handled);
        wake?.();
      });
      while (inFlight.size >= BATCHES_IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  })();

  return {
    async stop() {
      running = false;
      wake?.();
      await loop;
      clearInterval(progress);
      await stream.close().catch(() => {});
      await feeding;
    },
  };
}
