import type { NatsConnection } from "@nats-io/transport-node";
import { DeliverPolicy, jetstreamManager, type JsMsg } from "@nats-io/jetstream";
import { consumers, decode, eventFilter, streams } from "@corral/contracts";
import { ensureDurableConsumer, ensureStreams, pullBatches, sleep, type Logger } from "@corral/shared";
import { parseNodeEvents, type NodeEvent, type ParsedNodeEvents } from "../domain/node-events.js";
import type { UsageStore } from "./usage-store.js";

/** Durable consumer of node events on the events stream. Every metrics instance shares it. */
const NODE_EVENTS_CONSUMER = consumers.nodeEvents;
/** Node events of any tenant: `node.changes` batches, and `node.created` / `node.deleted` in older history. */
const NODE_EVENTS_FILTER = eventFilter("node.*");

export interface EventFeedOptions {
  nc: NatsConnection;
  store: UsageStore;
  log: Logger;
  /** Messages per batch (one store call, then one ack each). @default 512 */
  batchSize?: number;
  /** How long one pull waits for more messages, ms. @default 1000 */
  pullExpiresMs?: number;
  /**
   * Claims an empty store: answers true once when the store has no data yet (new, or lost). The consumer is then
   * recreated so the stream's whole history (30 days) is replayed into it. Asked at start and every
   * `emptyCheckMs`. @default never empty
   */
  claimEmpty?: () => Promise<boolean>;
  /** @default 10000 */
  emptyCheckMs?: number;
}

export interface EventFeed {
  /**
   * Resolves once every node event the stream holds now has been recorded and acked (by any instance), so none
   * of them can be recorded later; false when that did not happen within `timeoutMs`.
   */
  caughtUp(timeoutMs: number): Promise<boolean>;
  /** Ends the pull loop after the batch in hand. Idempotent. */
  stop(): Promise<void>;
}

/** A message's node events; one that is not even msgpack is one malformed part. */
function decodeNodeEvents(m: JsMsg): ParsedNodeEvents {
  try {
    return parseNodeEvents(decode(m.data));
  } catch {
    return { events: [], malformed: 1 };
  }
}

/**
 * Feeds node events into the usage store: pull a batch, record it (idempotently), ack it. A batch that fails is
 * nak'ed and comes back; a message that is no node event is logged and acked, so it cannot block the stream, and
 * so is a malformed event in a `node.changes` message (its other events are recorded).
 */
export async function startEventFeed(options: EventFeedOptions): Promise<EventFeed> {
  const { nc, store, log } = options;
  const batchSize = options.batchSize ?? 512;
  await ensureStreams(nc);
  const jsm = await jetstreamManager(nc);
  const emptyCheckMs = options.emptyCheckMs ?? 10_000;
  let checkedAt = 0;
  /** True when the store was found empty and the consumer dropped, so that it is made anew from the start. */
  const replayIfEmpty = async (): Promise<boolean> => {
    if (!options.claimEmpty || Date.now() - checkedAt < emptyCheckMs) return false;
    checkedAt = Date.now();
    if (!(await options.claimEmpty())) return false;
    log.info("usage store is empty: replaying the events stream");
    await jsm.consumers.delete(streams.events, NODE_EVENTS_CONSUMER).catch(() => false);
    return true;
  };
  // Without Redis the check fails; it is made again every `emptyCheckMs`, and the events wait in the stream.
  await replayIfEmpty().catch((err: unknown) => log.warn("could not check whether the usage store is empty", { err }));
  const consumer = () =>
    ensureDurableConsumer(nc, streams.events, {
      durable_name: NODE_EVENTS_CONSUMER,
      filter_subject: NODE_EVENTS_FILTER,
      deliver_policy: DeliverPolicy.All,
      ack_wait: 30_000_000_000,
      max_ack_pending: 20_000,
    });

  /** Logs a Redis outage once, not once per redelivered batch. */
  let recordingFails = false;
  const handle = async (messages: JsMsg[]) => {
    const events: NodeEvent[] = [];
    for (const m of messages) {
      const parsed = decodeNodeEvents(m);
      events.push(...parsed.events);
      if (parsed.malformed > 0) log.warn("dropping what is no node event", { subject: m.subject, seq: m.seq, malformed: parsed.malformed });
    }
    try {
      await store.apply(events);
    } catch (err) {
      if (!recordingFails) log.warn("recording node events failed; they are redelivered until it works", { err });
      recordingFails = true;
      for (const m of messages) m.nak(1000);
      return;
    }
    if (recordingFails) log.info("recording node events works again");
    recordingFails = false;
    for (const m of messages) m.ack();
  };

  const loop = pullBatches({
    consumer,
    handle,
    batchSize,
    expiresMs: options.pullExpiresMs ?? 1000,
    restart: replayIfEmpty,
    log,
    name: "node event feed",
  });

  return {
    async caughtUp(timeoutMs) {
      const target = (await jsm.streams.info(streams.events)).state.last_seq;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const info = await jsm.consumers.info(streams.events, NODE_EVENTS_CONSUMER).catch(() => undefined);
        // The ack floor passes purged and unfiltered messages too once everything before it is acked.
        if (info && (info.ack_floor.stream_seq >= target || (info.num_pending === 0 && info.num_ack_pending === 0))) return true;
        if (Date.now() >= deadline) return false;
        await sleep(100);
      }
    },
    stop: () => loop.stop(),
  };
}
