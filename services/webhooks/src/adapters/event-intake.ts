import type { NatsConnection } from "@nats-io/transport-node";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from "@nats-io/jetstream";
import { consumers, decode, streams, type AuditEntry, type ClusterStreamEvent } from "@corral/contracts";
import { sleep, type Logger } from "@corral/shared";
import { eventOfAuditEntry, eventsOfClusterMessage, type WebhookEvent } from "../domain/events.js";

/** The two durable consumers the webhooks service reads: every tenant's cluster events, and its audit entries. */
const SOURCES = [
  {
    stream: streams.events,
    consumer: consumers.webhookEvents,
    filter: "corral.events.*.cluster.>",
    eventsOf: (m: JsMsg) => eventsOfClusterMessage(decode<ClusterStreamEvent>(m.data), m.seq),
  },
  {
    stream: streams.audit,
    consumer: consumers.webhookAudit,
    filter: "corral.audit.*",
    eventsOf: (m: JsMsg) => {
      const event = eventOfAuditEntry(decode<AuditEntry>(m.data), m.seq);
      return event ? [event] : [];
    },
  },
] as const;

/**
 * Creates the durable consumers when absent (idempotent across instances). They start at the events to come: no
 * endpoint is told of what happened before it was registered.
 */
export async function ensureIntakeConsumers(nc: NatsConnection): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (const source of SOURCES) {
    const exists = await jsm.consumers.info(source.stream, source.consumer).then(
      () => true,
      () => false,
    );
    if (exists) continue;
    await jsm.consumers
      .add(source.stream, {
        durable_name: source.consumer,
        filter_subject: source.filter,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.New,
        ack_wait: 30_000_000_000,
        max_deliver: -1,
        max_ack_pending: 10_000,
      })
      .catch(async (err: unknown) => {
        // Another instance created it in between.
        await jsm.consumers.info(source.stream, source.consumer).catch(() => {
          throw err;
        });
      });
  }
}

export interface IntakeOptions {
  nc: NatsConnection;
  log: Logger;
  /** Queues the deliveries of one event (stored before it resolves); the message is acknowledged after. */
  handle(event: WebhookEvent): Promise<void>;
  signal: AbortSignal;
  /** @default 256 */
  batchSize?: number;
}

/**
 * Reads both consumers until `signal` aborts, each in stream order: an event's deliveries are stored before its
 * message is acknowledged, so a crash loses none (the message comes again, and storing is idempotent). A message
 * that is no event is logged and acknowledged so it cannot block the rest.
 */
export async function runIntake(options: IntakeOptions): Promise<void> {
  const { nc, log, signal } = options;
  const js = jetstream(nc);
  await Promise.all(
    SOURCES.map(async (source) => {
      while (!signal.aborted) {
        try {
          const consumer = await js.consumers.get(source.stream, source.consumer);
          while (!signal.aborted) {
            const batch = await consumer.fetch({ max_messages: options.batchSize ?? 256, expires: 1000 });
            const onAbort = () => void batch.close().catch(() => {});
            signal.addEventListener("abort", onAbort, { once: true });
            try {
              for await (const m of batch) {
                if (signal.aborted) break;
                await handleMessage(m, source.eventsOf, options);
              }
            } finally {
              signal.removeEventListener("abort", onAbort);
            }
          }
        } catch (err) {
          if (signal.aborted) break;
          log.warn("webhook event intake interrupted; retrying", { stream: source.stream, err });
          await sleep(1000, signal);
        }
      }
    }),
  );
}

async function handleMessage(m: JsMsg, eventsOf: (m: JsMsg) => WebhookEvent[], options: IntakeOptions): Promise<void> {
  let events: WebhookEvent[];
  try {
    events = eventsOf(m);
  } catch {
    options.log.warn("dropping what is no event", { subject: m.subject, seq: m.seq });
    m.ack();
    return;
  }
  for (const event of events) await options.handle(event);
  m.ack();
}
