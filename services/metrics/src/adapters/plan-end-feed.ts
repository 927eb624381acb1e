import type { NatsConnection } from "@nats-io/transport-node";
import { DeliverPolicy, type JsMsg } from "@nats-io/jetstream";
import { consumers, decode, eventFilter, streams } from "@corral/contracts";
import { ensureDurableConsumer, pullBatches, type AuditLog, type Logger } from "@corral/shared";
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
  const consumer = () =>
    ensureDurableConsumer(nc, streams.events, {
      durable_name: PLAN_ENDS_CONSUMER,
      filter_subjects: PLAN_END_FILTERS,
      deliver_policy: DeliverPolicy.New,
      ack_wait: 30_000_000_000,
      max_ack_pending: 20_000,
    });

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

  return pullBatches({
    consumer,
    handle: async (messages) => void (await Promise.all(messages.map(handle))),
    batchSize,
    expiresMs: options.pullExpiresMs ?? 1000,
    log,
    name: "plan end feed",
  });
}
