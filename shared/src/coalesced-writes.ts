import type { NatsConnection } from "@nats-io/transport-node";

/**
 * The part of nats.js's protocol handler (nats-core 3.x `ProtocolHandler`) that decides when buffered commands go
 * to the socket. Not public API: {@link coalesceWrites} checks the shape and refuses a version without it.
 */
interface ProtocolHandler {
  outbound: { size(): number };
  pendingLimit: number;
  flushPending(): void;
  close(err?: Error): Promise<void>;
}

function protocolOf(nc: NatsConnection): ProtocolHandler {
  const protocol = (nc as unknown as { protocol?: Partial<ProtocolHandler> }).protocol;
  if (
    typeof protocol?.flushPending !== "function" ||
    typeof protocol.close !== "function" ||
    typeof protocol.outbound?.size !== "function" ||
    typeof protocol.pendingLimit !== "number"
  ) {
    throw new Error("nats.js has no ProtocolHandler.flushPending/outbound/pendingLimit: check coalesced-writes.ts against this nats.js version");
  }
  return protocol as ProtocolHandler;
}

/**
 * Makes `nc` write its buffered commands to the socket once per turn of the event loop (setImmediate) instead of
 * at the first microtask checkpoint after each command. Each uWebSockets.js request, and each NATS message whose
 * handler awaits, runs in its own checkpoint, so a gateway or service under load wrote once per request or reply;
 * on loopback such a write costs the sender the receiver's TCP work too, and nats-server a wake-up. Now the
 * requests and replies of one turn leave in one write. Order is kept (one buffer); a command that fills the buffer
 * past nats.js's own limit still writes at once, and `close()` writes what is buffered before closing.
 */
export function coalesceWrites(nc: NatsConnection): void {
  const protocol = protocolOf(nc);
  const flushNow = protocol.flushPending.bind(protocol);
  const close = protocol.close.bind(protocol);
  let scheduled = false;
  const flushScheduled = () => {
    scheduled = false;
    flushNow();
  };
  protocol.flushPending = () => {
    if (protocol.outbound.size() >= protocol.pendingLimit) return flushNow();
    if (scheduled) return;
    scheduled = true;
    setImmediate(flushScheduled);
  };
  protocol.close = (err?: Error) => {
    flushNow();
    return close(err);
  };
}
