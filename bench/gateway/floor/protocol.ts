import { connect, type NatsConnection } from "@nats-io/transport-node";
import { splitServerList } from "@corral/contracts";

/** What the floor's HTTP forwarder and echo responder exchange over NATS (msgpack). */
export const FLOOR_SUBJECT = "bench.floor.echo";

export interface FloorRequest {
  path: string;
  userId: string;
  tenant: string;
}

export interface FloorReply {
  value: unknown;
}

/**
 * The floor's connection: nats.js as it comes, with only `noAsyncTraces` (a stack trace per request otherwise), so
 * that what Corral's own connection layer adds on top (shared/src/nats.ts: coalesced writes, muxed requests)
 * counts for the real pipeline and the floor stays what any gateway of this shape gets from the library.
 */
export async function connectFloor(url: string, name: string): Promise<NatsConnection> {
  const { servers, credentials } = splitServerList(url);
  return connect({ servers, ...(credentials ? { user: credentials.user, pass: credentials.password } : {}), name, noAsyncTraces: true });
}
