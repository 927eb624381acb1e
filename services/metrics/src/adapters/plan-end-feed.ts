import type { NatsConnection } from "@nats-io/transport-node";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from "@nats-io/jetstream";
import { consumers, decode, eventFilter, streams } from "@corral/contracts";
import { sleep, type AuditLog, type Logger } from "@corral/shared";
import { planEndEntry, planEndMessageId, planEndsIn } from "../domain/plan-ends.js";
import type { FailedTaskLookup } from "./failed-task-lookup.js";

/** Shared by every metrics instance. */
const PLAN_ENDS_CONSUMER = consumers.planEnds;
/** A plan's end is stored alone, or inside the `plan.progress` of the write that reached it. */
const PLAN_END_FILTERS = [eventFilter("cluster.*.plan.finished"), eventFilter("cluster.*.plan.progress")];

export interface PlanEndFeedOptions {
  nc: NatsConnection;
  auditLog: AuditLog;
  failedTaskAt: FailedTaskLookup;
  log: Logger;
  /** Messages per pull. @default 256 */
  batchSize?: number;
  /** How long one pull waits for more messages, ms. @default 1000 */
  pullExpiresMs?: number;
}

export interface PlanEndFeed {
  /** Ends the pull loop after the batch in hand. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Records the end of every plan in the audit log, once: a durable consumer of plans' ends (from when it was first
 * made: the audit log does not go back to plans that ended before it) acks a message only once the audit stream
 * has the entries it holds, so an end whose recording a crash cut short is delivered again; it is then published
 * under the same message id and dropped by the stream as a duplicate. The same end stored twice on the events
 * stream (the reconciler carrying it out again after a crash) is dropped the same way.
 */
export async function startPlanEndFeed(options: PlanEndFeedOptions): Promise<PlanEndFeed> {
  const { nc, auditLog, failedTaskAt, log } = options;
  const batchSize = options.batchSize ?? 256;
  const expires = Math.max(1000, options.pullExpiresMs ?? 1000);
  const jsm = await jetstreamManager(nc);
  const ensureConsumer = async () => {
    try {
      await jsm.consumers.info(streams.events, PLAN_ENDS_CONSUMER);
    } catch {
      await jsm.consumers
        .add(streams.events, {
          durable_name: PLAN_ENDS_CONSUMER,
          filter_subjects: PLAN_END_FILTERS,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.New,
          ack_wait: 30_000_000_000,
          max_deliver: -1,
          max_ack_pending: 20_000,
        })
        .catch(async (err: unknown) => {
          // Another instance created it in between.
          await jsm.consumers.info(streams.events, PLAN_ENDS_CONSUMER).catch(() => {
            throw err;
          });
        });
    }
    return jetstream(nc).consumers.get(streams.events, PLAN_ENDS_CONSUMER);
  };

  /** Logs an outage of the audit stream once, not once per redelivered end. */
  let recordingFails = false;
  const handle = async (m: JsMsg): Promise<void> => {
    let stored: unknown;
    try {
      stored = decode(m.data);
    } catch {
      log.warn("dropping what is no cluster event", { subject: m.subject, seq: m.seq });
      return m.ack();
    }
    try {
      for (const end of planEndsIn(stored)) {
        const failedAt = end.outcome === "failed" && !end.failure?.nodeId ? await failedTaskAt(end, m.seq) : undefined;
        await auditLog.recordOnce(planEndEntry(end, failedAt), planEndMessageId(end));
      }
    } catch (err) {
      if (!recordingFails) log.warn("recording a plan's end failed; it is delivered again until it works", { err });
      recordingFails = true;
      return m.nak(1000);
    }
    recordingFails = false;
    m.ack();
  };

  let running = true;
  let current: { close(): Promise<void | Error> } | undefined;
  const loop = (async () => {
    while (running) {
      try {
        const consumer = await ensureConsumer();
        while (running) {
          const batch = await consumer.fetch({ max_messages: batchSize, expires });
          current = batch;
          const messages: JsMsg[] = [];
          for await (const m of batch) messages.push(m);
          current = undefined;
          await Promise.all(messages.map(handle));
        }
      } catch (err) {
        if (!running) break;
        log.warn("plan end feed interrupted; retrying", { err });
        await sleep(1000);
      }
    }
  })();

  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        running = false;
        await current?.close().catch(() => {});
        await loop;
      })();
      return stopping;
    },
  };
}
