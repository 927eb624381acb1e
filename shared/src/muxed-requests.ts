import type { Msg, MsgHdrs, NatsConnection } from "@nats-io/transport-node";
import { newInbox, perConnection } from "./nats.js";

/**
 * Request/reply over one reply subscription per connection (`<inbox>.<token>`), the requests of the hot paths
 * (service calls, JetStream publishes and direct gets). nats.js builds a request object, a timer, a deferred and an
 * Error (even on success) per request; at thousands of requests a second that was the largest single cost of the
 * clusters service, the provisioners and the gateway. Here a request is a map entry: timeouts are swept a few
 * times a second instead of a timer each, so one fires up to {@link SWEEP_MS} late.
 */
export interface MuxedRequests {
  /**
   * Publishes `data` to `subject` with a reply subject of this connection and resolves with the first reply (a
   * status reply too, such as 503 "no responders": the caller reads `msg.headers`). Rejects with `timeoutError()`
   * when none came within `timeoutMs`, and when the connection closes.
   */
  request(subject: string, data: Uint8Array, options: MuxedRequestOptions): Promise<Msg>;
}

export interface MuxedRequestOptions {
  timeoutMs: number;
  timeoutError: () => Error;
  headers?: MsgHdrs;
}

/** How often pending requests are checked for their deadline. */
const SWEEP_MS = 50;

interface Pending {
  resolve(msg: Msg): void;
  reject(err: Error): void;
  deadline: number;
  timeoutError: () => Error;
  /** The requests of the same timeout, this one among them. */
  sameTimeout: Map<string, Pending>;
}

/** The connection's requester (one reply subscription per connection, made on first use). */
export const muxedRequests = perConnection(createMuxedRequests);

function createMuxedRequests(nc: NatsConnection): MuxedRequests {
  const prefix = newInbox(nc);
  const pending = new Map<string, Pending>();
  // Per timeout, requests in the order they were made, which is also the order of their deadlines: a sweep stops
  // at the first one still in time.
  const byTimeout = new Map<number, Map<string, Pending>>();
  let next = 0;
  let sweeper: ReturnType<typeof setInterval> | undefined;

  nc.subscribe(`${prefix}.*`, {
    callback: (_err, msg) => {
      const token = msg.subject.slice(prefix.length + 1);
      const p = pending.get(token);
      if (!p) return;
      pending.delete(token);
      p.sameTimeout.delete(token);
      p.resolve(msg);
    },
  });
  void nc.closed().then(() => {
    for (const p of pending.values()) p.reject(new Error("connection closed"));
    pending.clear();
    byTimeout.clear();
    if (sweeper) clearInterval(sweeper);
  });

  const sweep = () => {
    const now = Date.now();
    for (const [timeoutMs, queue] of byTimeout) {
      for (const [token, p] of queue) {
        if (p.deadline > now) break;
        queue.delete(token);
        pending.delete(token);
        p.reject(p.timeoutError());
      }
      if (queue.size === 0) byTimeout.delete(timeoutMs);
    }
    if (pending.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  return {
    request: (subject, data, options) =>
      new Promise<Msg>((resolve, reject) => {
        const token = (next++).toString(36);
        let sameTimeout = byTimeout.get(options.timeoutMs);
        if (!sameTimeout) byTimeout.set(options.timeoutMs, (sameTimeout = new Map()));
        const p: Pending = { resolve, reject, deadline: Date.now() + options.timeoutMs, timeoutError: options.timeoutError, sameTimeout };
        pending.set(token, p);
        sameTimeout.set(token, p);
        if (!sweeper) {
          sweeper = setInterval(sweep, SWEEP_MS);
          sweeper.unref();
        }
        try {
          nc.publish(subject, data, { reply: `${prefix}.${token}`, ...(options.headers ? { headers: options.headers } : {}) });
        } catch (err) {
          pending.delete(token);
          sameTimeout.delete(token);
          reject(err as Error);
        }
      }),
  };
}
