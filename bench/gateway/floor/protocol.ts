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
