import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { eventsRepublish, streams } from "@corral/contracts";

/**
 * Gives the events stream its republish rule (`eventsRepublish`): every stored event is published again on a
 * core subject with its stream sequence, which is what gateways follow live; and direct gets, with which they
 * read a cluster's past events (`nextBySubject`). Idempotent; after `ensureStreams`.
 */
export async function ensureLiveEventRepublish(nc: NatsConnection): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(streams.events);
  const { republish, allow_direct } = info.config;
  if (allow_direct && republish?.dest === eventsRepublish.dest && republish.src === eventsRepublish.src) return;
  await jsm.streams.update(streams.events, { ...info.config, allow_direct: true, republish: { ...eventsRepublish } });
}
