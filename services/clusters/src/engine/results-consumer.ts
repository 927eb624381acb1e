import { jetstream, jetstreamManager, type JsMsg } from "@nats-io/jetstream";
import { TaskName, decode, streams } from "@corral/contracts";
import { RESULTS_ACK_WAIT_MS, ensureResultsConsumer, type TaskResult } from "@corral/shared";
import { mapLimit } from "../adapters/buckets.js";
import { taskIndexOf } from "../domain/ids.js";
import { applyResultToNode } from "../domain/node-results.js";
import { stagePositionOf, type PlanEvent } from "../domain/plan-machine.js";
import type { PlanRecord } from "../domain/records.js";
import { outputWithoutSecrets, secretsOf } from "../domain/secrets.js";
import { taskEndedEvent } from "../domain/stream-events.js";
import type { Effects } from "../actor/index.js";
import type { EngineDeps } from "./deps.js";

const BATCH = 256;

export interface ResultsConsumer {
  stop(): Promise<void>;
}

/**
 * Reads task results in batches: each result is merged into its node (idempotent per dispatch), then every
 * plan's results are applied to its actor in one compare-and-set, then the batch is acked. A crash before the
 * ack redelivers the batch, which changes nothing the second time.
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

  const handleBatch = async (messages: JsMsg[]) => {
    // Long batches keep their messages: progress acks stop them from going to another instance.
    const progress = setInterval(() => {
      for (const m of messages) m.working();
    }, RESULTS_ACK_WAIT_MS / 3);
    let showedSecrets: Set<number>;
    try {
      showedSecrets = await applyBatch(messages.map((m) => decode<TaskResult>(m.data)));
      for (const m of messages) m.ack();
    } finally {
      clearInterval(progress);
    }
    // The stored copy has them redacted; the raw result would otherwise keep them on the stream for days
    // (erased: overwritten on disk, not only marked deleted).
    if (showedSecrets.size > 0) {
      const jsm = await jetstreamManager(deps.nc);
      for (const i of showedSecrets) {
        const seq = messages[i]?.seq;
        if (seq !== undefined) await jsm.streams.deleteMessage(streams.results, seq, true).catch(() => {});
      }
    }
  };

  /** The secret values among the provider fields a plan's request gave (read once per plan and batch). */
  const requestSecretsOf = async (clusterId: string, planId: string): Promise<string[]> => {
    const fields = await deps.credentials.get(clusterId, planId);
    if (Object.keys(fields).length === 0) return [];
    const cluster = await deps.clusters.fixedPartsOf(clusterId);
    return secretsOf(fields, cluster ? await deps.tenancy.providerType(cluster.provider.providertype) : undefined);
  };

  /** Applies a batch; answers the positions of results whose output showed such fields. */
  const applyBatch = async (batch: TaskResult[]): Promise<Set<number>> => {
    // A failed task's output is kept: without the request's provider fields, which are not kept.
    const secrets = new Map<string, Promise<string[]>>();
    const showedSecrets = new Set<number>();
    const results = await Promise.all(
      batch.map(async (raw, i) => {
        if (raw.status === 0 || (!raw.stdout && !raw.stderr)) return raw;
        const key = `${raw.clusterId}/${raw.planId}`;
        let found = secrets.get(key);
        if (!found) secrets.set(key, (found = requestSecretsOf(raw.clusterId, raw.planId)));
        const r = outputWithoutSecrets(raw, await found);
        if (r !== raw) showedSecrets.add(i);
        return r;
      }),
    );
    // Only the parts of plans and clusters that never change are needed here: mostly served from memory,
    // and looked up once per batch.
    const plans = new Map<string, Promise<PlanRecord | undefined>>();
    const owners = new Map<string, Promise<string>>();
    const planOf = (r: TaskResult) => {
      const key = `${r.clusterId}/${r.planId}`;
      let p = plans.get(key);
      if (!p) plans.set(key, (p = deps.plans.fixedPartsOf(r.clusterId, r.planId)));
      return p;
    };
    const ownerOf = (clusterId: string) => {
      let p = owners.get(clusterId);
      if (!p) owners.set(clusterId, (p = deps.clusters.fixedPartsOf(clusterId).then((c) => c?.ownerId ?? "")));
      return p;
    };
    const byPlan = new Map<string, { clusterId: string; planId: string; events: PlanEvent[] }>();
    await mapLimit(results, 64, async (r) => {
      const index = taskIndexOf(r.planId, r.taskId);
      if (index === undefined) return;
      const plan = await planOf(r);
      const service = plan ? await serviceOf(plan, index) : "";
      await deps.nodes.modify(r.clusterId, r.nodeId, (current) => {
        const next = current ? applyResultToNode(current.value, r, service) : undefined;
        return next ? { put: next } : { keep: true };
      });
      // Published on every delivery, not only the first: after a crash the repeat is dropped by its message id.
      if (r.status === 0 && (r.taskName === TaskName.Create || r.taskName === TaskName.Delete)) {
        await deps.publisher.publishEvent({
          type: r.taskName === TaskName.Create ? "node.created" : "node.deleted",
          tenant: r.tenant,
          clusterId: r.clusterId,
          nodeId: r.nodeId,
          ownerId: await ownerOf(r.clusterId),
          time: r.endTime,
          taskId: r.taskId,
          dispatch: r.dispatch,
        });
      }
      deps.publisher.publishClusterEvents([taskEndedEvent(r, service, deps.now())]);
      const key = `${r.clusterId}/${r.planId}`;
      let group = byPlan.get(key);
      if (!group) byPlan.set(key, (group = { clusterId: r.clusterId, planId: r.planId, events: [] }));
      deps.metrics.taskResult(r);
      const event: PlanEvent = { type: "task.result", index, dispatch: r.dispatch, taskName: r.taskName, ok: r.status === 0, at: deps.now() };
      if (r.stderr) event.message = r.stderr.slice(-500);
      group.events.push(event);
    });
    await mapLimit([...byPlan.values()], 16, (g) => effects.deliverToPlan({ clusterId: g.clusterId, planId: g.planId }, g.events));
    return showedSecrets;
  };

  // consume() streams messages as they come; batches are whatever has arrived while the last batch ran.
  const stream = await consumer.consume({ max_messages: BATCH * 2 });
  const queue: JsMsg[] = [];
  let wake: (() => void) | undefined;
  const feeding = (async () => {
    for await (const m of stream) {
      queue.push(m);
      wake?.();
    }
  })().catch((err: unknown) => deps.log.error("results stream ended", { err }));

  const loop = (async () => {
    while (running) {
      if (queue.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 500);
        });
        wake = undefined;
        continue;
      }
      const batch = queue.splice(0, BATCH);
      try {
        await handleBatch(batch);
      } catch (err) {
        deps.log.warn("results batch failed; it will be redelivered", { err });
        for (const m of batch) m.nak(1000);
      }
    }
  })();

  return {
    async stop() {
      running = false;
      wake?.();
      await loop;
      await stream.close().catch(() => {});
      await feeding;
    },
  };
}
