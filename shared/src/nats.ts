import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "./log.js";

export interface ConnectOptions {
  /** Comma-separated NATS URLs. */
  url: string;
  /** Connection name shown by the server's monitoring. */
  name: string;
  log?: Logger;
  /** @default 10000 */
  timeoutMs?: number;
}

/**
 * Opens a NATS connection that reconnects forever. `noAsyncTraces` is on: the default builds a
 * stack trace per request, which costs about 30% of request throughput (DESIGN.md "Runtime").
 */
export async function connectNats(options: ConnectOptions): Promise<NatsConnection> {
  const nc = await connect({
    servers: options.url.split(",").map((s) => s.trim()).filter(Boolean),
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: true,
    timeout: options.timeoutMs ?? 10000,
    noAsyncTraces: true,
  });
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
