import type { NatsConnection } from "@nats-io/transport-node";
import { DeliverPolicy, RetentionPolicy, StorageType, jetstreamManager } from "@nats-io/jetstream";
import {
  type StreamName,
  consumers,
  DUPLICATE_WINDOW_MS,
  RESULTS_ACK_WAIT_MS,
  TASK_ACK_WAIT_MS,
  streams,
  streamSubjects,
  taskConsumerName,
  taskSubject,
} from "@corral/contracts";
import { createDurableConsumer, createUnlessFound } from "./durable-consumers.js";
import { storeReplicas } from "./replicas.js";

/**
 * The streams and durable consumers of the task protocol (contracts/src/task-protocol.ts), created idempotently
 * by every service that needs them.
 */

const ns = (ms: number) => ms * 1_000_000;

/**
 * What each stream keeps: tasks until a worker acks them, results for a week, events for 30 days, the audit log as
 * long as `audit.*` says (these are its defaults; the launcher applies the configured ones: audit-stream.ts). The
 * audit log is read by direct gets (`GET /audit`), so it allows them from the start.
 */
const STREAM_RETENTION: Record<StreamName, { retention: RetentionPolicy; max_age?: number; max_bytes?: number; allow_direct?: boolean }> = {
  [streams.tasks]: { retention: RetentionPolicy.Workqueue },
  [streams.results]: { retention: RetentionPolicy.Limits, max_age: ns(7 * 24 * 3600_000) },
  [streams.events]: { retention: RetentionPolicy.Limits, max_age: ns(30 * 24 * 3600_000) },
  [streams.audit]: { retention: RetentionPolicy.Limits, max_age: ns(90 * 24 * 3600_000), max_bytes: 1024 * 1024 * 1024, allow_direct: true },
};

/**
 * Creates (or keeps) the streams, with the connection's replica count (replicas.ts) unless told another;
 * every service that needs them calls this, idempotently.
 */
export async function ensureStreams(nc: NatsConnection, options: { replicas?: number } = {}): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const replicas = options.replicas ?? storeReplicas(nc);
  for (const name of Object.values(streams)) {
    await createUnlessFound(
      () => jsm.streams.info(name),
      () =>
        jsm.streams.add({
          name,
          subjects: [streamSubjects[name]],
          storage: StorageType.File,
          num_replicas: replicas,
          duplicate_window: ns(DUPLICATE_WINDOW_MS),
          ...STREAM_RETENTION[name],
        }),
    );
  }
}

/** Creates (or keeps) the durable pull consumer workers of a tenant share; returns its name. Idempotent. */
export function ensureTaskConsumer(nc: NatsConnection, tenant: string): Promise<string> {
  return createDurableConsumer(nc, streams.tasks, {
    durable_name: taskConsumerName(tenant),
    filter_subject: taskSubject(tenant),
    deliver_policy: DeliverPolicy.All,
    ack_wait: ns(TASK_ACK_WAIT_MS),
    max_ack_pending: 10_000,
  });
}

/** Creates (or keeps) the durable consumer the clusters service reads results with; returns its name. Idempotent. */
export function ensureResultsConsumer(nc: NatsConnection): Promise<string> {
  return createDurableConsumer(nc, streams.results, {
    durable_name: consumers.results,
    deliver_policy: DeliverPolicy.All,
    ack_wait: ns(RESULTS_ACK_WAIT_MS),
    max_ack_pending: 20_000,
  });
}
