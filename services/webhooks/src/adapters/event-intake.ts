import type { NatsConnection } from "@nats-io/transport-node";
import { DeliverPolicy, type JsMsg } from "@nats-io/jetstream";
import { consumers, decode, streams, type ClusterStreamEvent } from "@corral/contracts";
import { ensureDurableConsumer, pullBatches, sleep, type DurableConsumerConfig, type Logger } from "@corral/shared";
import { eventsOfAuditMessage, eventsOfClusterMessage, type WebhookEvent } from "../domain/events.js";

/**
 * The two durable consumers the webhooks service reads: every tenant's cluster events, and its audit entries (a
 * message of either may hold several events).
 */
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
    eventsOf: (m: JsMsg) => eventsOfAuditMessage(decode(m.data), m.subject, m.seq),
  },
] as const;

/** A source's consumer: from the events to come when first made, so no endpoint hears of what came before it. */
const configOf = (source: (typeof SOURCES)[number]): DurableConsumerConfig => ({
  durable_name: source.consumer,
  filter_subject: source.filter,
  deliver_policy: DeliverPolicy.New,
  ack_wait: 30_000_000_000,
  max_ack_pending: 10_000,
});

/** Creates the durable consumers when absent (idempotent across instances). */
export async function ensureIntakeConsumers(nc: NatsConnection): Promise<void> {
  for (const source of SOURCES) await ensureDurableConsumer(nc, source.stream, configOf(source));
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
 * that is no event is logged and acknowledged so it cannot block the rest; when storing fails, the message and
 * those after it in the batch are handed back and come again.
 */
export async function runIntake(options: IntakeOptions): Promise<void> {
  const { nc, log, signal } = options;
  const loops = SOURCES.map((source) =>
    pullBatches({
      consumer: () => ensureDurableConsumer(nc, source.stream, configOf(source)),
      handle: (messages) => handleBatch(messages, source.eventsOf, options),
      batchSize: options.batchSize ?? 256,
      expiresMs: 1000,
      log,
      name: `webhook intake of ${source.stream}`,
    }),
  );
  await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
  await Promise.all(loops.map((loop) => loop.stop()));
}

async function handleBatch(messages: JsMsg[], eventsOf: (m: JsMsg) => WebhookEvent[], options: IntakeOptions): Promise<void> {
  for (const [i, m] of messages.entries()) {
    let events: WebhookEvent[];
    try {
      events = eventsOf(m);
    } catch {
      options.log.warn("dropping what is no event", { subject: m.subject, seq: m.seq });
      m.ack();
      continue;
    }
    try {
      for (const event of events) await options.handle(event);
    } catch (err) {
      options.log.warn("could not queue webhook deliveries; the events come again", { err });
      // At once and in order, so they come back before what follows them; the pause spares a store that is down.
      for (const rest of messages.slice(i)) rest.nak();
      await sleep(1000);
      return;
    }
    m.ack();
  }
}
