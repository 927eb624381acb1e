import { connect, createInbox, type NatsConnection } from "@nats-io/transport-node";
import { coalesceWrites } from "./coalesced-writes.js";
import type { Logger } from "./log.js";
import { setStoreReplicas } from "./replicas.js";
import { splitServerList } from "@corral/contracts";

export interface ConnectOptions {
  /** Comma-separated NATS URLs; `nats://user:password@host:port` logs in as that user. */
  url: string;
  /** Connection name shown by the server's monitoring. */
  name: string;
  log?: Logger;
  /** @default 10000 */
  timeoutMs?: number;
  /**
   * First token of every reply subject of this connection. A user whose permissions let it subscribe only to its
   * own prefix (provisioners: `PROVISIONER_INBOX_PREFIX` in subjects.ts) cannot listen to other users' replies.
   * @default "_INBOX"
   */
  inboxPrefix?: string;
  /** `nats.replicas` for the streams, buckets and object stores this connection creates (replicas.ts). @default 0, automatic */
  replicas?: number;
}


const inboxPrefixes = new WeakMap<NatsConnection, string>();

/** `create` made once per connection, on first use, and kept for the connection's life. */
export function perConnection<T extends object>(create: (nc: NatsConnection) => T): (nc: NatsConnection) => T {
  const made = new WeakMap<NatsConnection, T>();
  return (nc) => {
    let found = made.get(nc);
    if (!found) {
      found = create(nc);
      made.set(nc, found);
    }
    return found;
  };
}

/**
 * Opens a NATS connection that reconnects forever. `noAsyncTraces` is on: the default builds a
 * stack trace per request, which costs about 30% of request throughput (docs/architecture.md, Runtime). Writes are
 * coalesced per event-loop turn (coalesced-writes.ts).
 */
export async function connectNats(options: ConnectOptions): Promise<NatsConnection> {
  const { servers, credentials } = splitServerList(options.url);
  const nc = await connect({
    servers,
    ...(credentials ? { user: credentials.user, pass: credentials.password } : {}),
    ...(options.inboxPrefix ? { inboxPrefix: options.inboxPrefix } : {}),
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: true,
    timeout: options.timeoutMs ?? 10000,
    noAsyncTraces: true,
  });
  coalesceWrites(nc);
  if (options.inboxPrefix) inboxPrefixes.set(nc, options.inboxPrefix);
  if (options.replicas !== undefined) setStoreReplicas(nc, options.replicas);
  const log = options.log;
  if (log) {
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === "disconnect" || s.type === "reconnect" || s.type === "error") {
          log.warn(`nats ${s.type}`, { server: "server" in s ? s.server : undefined });
        }
      }
    })().catch(() => {});
  }
  return nc;
}

/** A fresh reply subject under the connection's inbox prefix (what nats.js itself uses for its requests). */
export function newInbox(nc: NatsConnection): string {
  return createInbox(inboxPrefixes.get(nc));
}
