import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import { streams } from "@corral/contracts";
import { ensureTaskConsumer, newInbox, type Logger } from "@corral/shared";

/**
 * A task pulled from a tenant's work queue, with the acknowledgements the worker sends for it. A task is only
 * pulled for a worker that is waiting for one (one pull request of one message per idle worker), so no task
 * ever waits in a busy provisioner while another could run it.
 */
export interface TaskDelivery {
  readonly data: Uint8Array;
  /** Stream sequence. */
  readonly seq: number;
  /** 1 on the first delivery. */
  readonly deliveryCount: number;
  ack(): void;
  /** Hands it back for redelivery (after `delayMs`). */
  nak(delayMs?: number): void;
  /** Resets the ack wait while it runs. */
  working(): void;
  /** Never redelivers it. */
  term(): void;
}

/** The idle workers of one tenant, fed through one reply subscription. */
export interface TaskFeed {
  /** Waits for a task for one worker; `undefined` once `signal` aborts first. */
  next(signal: AbortSignal): Promise<TaskDelivery | undefined>;
  close(): void;
}

export interface TaskFeedOptions {
  nc: NatsConnection;
  tenant: string;
  log: Logger;
  /** How long one pull request stays at the server, in ms. */
  pullExpiresMs: number;
}

/** A pull the server never answered (lost in a reconnect) is written off this long after it expired. */
const LOST_PULL_GRACE_MS = 5_000;
const RETRY_MS = 1_000;
/** Waiting for the consumer this long is no longer the usual wait for a fresh installation's streams: warn once. */
const CONSUMER_WAIT_WARN_MS = 30_000;

interface Waiter {
  resolve(delivery: TaskDelivery | undefined): void;
}

/**
 * JetStream pull protocol without nats.js's per-fetch subscription and iterator: each idle worker adds a pull
 * request for one message to the consumer's `MSG.NEXT` subject, all replying to one inbox. Answers come back
 * in the order the requests wait at the server, so the feed tracks its requests as a queue of deadlines: a
 * message or a 408 (request expired) answers the oldest, and requests never answered are written off after
 * their deadline.
 */
export function createTaskFeed(options: TaskFeedOptions): TaskFeed {
  const { nc, tenant, log } = options;
  const inbox = newInbox(nc);
  const waiters: Waiter[] = [];
  /** Deadlines of our pull requests still waiting at the server, oldest first. */
  const pulls: number[] = [];
  let consumer: string | undefined;
  let ensuring: Promise<void> | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  const consumerWait = quietWait(log, tenant);

  const ensureConsumer = () => {
    ensuring ??= ensureTaskConsumer(nc, tenant).then(
      (name) => {
        ensuring = undefined;
        consumer = name;
        consumerWait.ended();
        pump();
      },
      (err: unknown) => {
        // Only the retry timer tries again: pumping here would ask the server again at once, in a tight loop.
        ensuring = undefined;
        consumerWait.failed(err);
        retryLater();
      },
    );
  };

  const retryLater = () => {
    if (retryTimer || closed) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      pump();
    }, RETRY_MS);
    retryTimer.unref();
  };

  /** Keeps one pull request waiting at the server per waiting worker. */
  const pump = () => {
    if (closed) return;
    const now = Date.now();
    while (pulls.length > 0 && (pulls[0] ?? 0) < now - LOST_PULL_GRACE_MS) pulls.shift();
    if (pulls.length >= waiters.length) return;
    if (!consumer) return ensureConsumer();
    const expiresMs = options.pullExpiresMs;
    const request = new TextEncoder().encode(JSON.stringify({ batch: 1, expires: expiresMs * 1_000_000 }));
    try {
      while (pulls.length < waiters.length) {
        nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${streams.tasks}.${consumer}`, request, { reply: inbox });
        pulls.push(now + expiresMs);
      }
    } catch (err) {
      log.warn("pull request failed; retrying", { err, tenant });
      retryLater();
    }
  };

  const onMessage = (msg: Msg) => {
    const status = msg.headers?.code ?? 0;
    if (status === 100) return; // heartbeat
    if (status !== 0) {
      pulls.shift();
      if (status === 408) return pump(); // expired unanswered: ask again
      // Anything else (no responders, consumer deleted, ...) may mean the consumer is gone: make sure of it.
      log.warn("pull request answered with a status; checking the consumer", { tenant, status, description: msg.headers?.description });
      consumer = undefined;
      return retryLater();
    }
    pulls.shift();
    const delivery = toDelivery(nc, msg);
    const waiter = waiters.shift();
    if (waiter) waiter.resolve(delivery);
    else delivery.nak(); // its worker stopped meanwhile: straight back to another one
    pump();
  };

  const sub: Subscription = nc.subscribe(inbox, { callback: (_err, msg) => onMessage(msg) });
  // After a reconnect the server may have lost our pull requests (or all its state): start over.
  const statuses = nc.status();
  void (async () => {
    for await (const s of statuses) {
      if (s.type !== "reconnect") continue;
      pulls.length = 0;
      consumer = undefined;
      pump();
    }
  })().catch(() => {});
  const sweeper = setInterval(pump, LOST_PULL_GRACE_MS);
  sweeper.unref();

  return {
    next(signal) {
      if (signal.aborted || closed) return Promise.resolve(undefined);
      return new Promise<TaskDelivery | undefined>((resolve) => {
        const waiter: Waiter = {
          resolve: (d) => {
            signal.removeEventListener("abort", onAbort);
            resolve(d);
          },
        };
        const onAbort = () => {
          const i = waiters.indexOf(waiter);
          if (i >= 0) waiters.splice(i, 1);
          resolve(undefined);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        waiters.push(waiter);
        pump();
      });
    },
    close() {
      closed = true;
      (statuses as { stop?: () => void }).stop?.();
      clearInterval(sweeper);
      if (retryTimer) clearTimeout(retryTimer);
      sub.unsubscribe();
      for (const w of waiters.splice(0)) w.resolve(undefined);
    },
  };
}

/**
 * Logs the wait for a tenant's task consumer without stack traces: on a fresh installation the task stream appears
 * a moment after the provisioner starts (the clusters service creates it), so the first failure is an info line,
 * retries are debug lines, a wait past {@link CONSUMER_WAIT_WARN_MS} is one warning, and the end of a wait is noted.
 */
function quietWait(log: Logger, tenant: string): { failed(err: unknown): void; ended(): void } {
  let since: number | undefined;
  let warned = false;
  return {
    failed(err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (since === undefined) {
        since = Date.now();
        log.info("waiting for the task consumer; retrying every second", { tenant, reason });
      } else if (!warned && Date.now() - since >= CONSUMER_WAIT_WARN_MS) {
        warned = true;
        log.warn("task consumer still unavailable; retrying", { tenant, reason, waitedMs: Date.now() - since });
      } else {
        log.debug("task consumer unavailable; retrying", { tenant, reason });
      }
    },
    ended() {
      if (since === undefined) return;
      log.info("task consumer ready", { tenant, waitedMs: Date.now() - since });
      since = undefined;
      warned = false;
    },
  };
}

/** Reads the delivery count from the ack subject (`$JS.ACK.[<domain>.<account>.]<stream>.<consumer>.<delivered>.<sseq>...`). */
function toDelivery(nc: NatsConnection, msg: Msg): TaskDelivery {
  const tokens = msg.reply?.split(".") ?? [];
  // Version 1 subjects have 9 tokens; version 2 adds domain and account hash after `$JS.ACK` (and a token).
  const at = tokens.length === 9 ? 4 : 6;
  const deliveryCount = Number(tokens[at]) || 1;
  const seq = Number(tokens[at + 1]) || 0;
  const reply = msg.reply ?? "";
  const send = (body: string) => {
    if (reply) nc.publish(reply, body);
  };
  return {
    data: msg.data,
    seq,
    deliveryCount,
    ack: () => send("+ACK"),
    nak: (delayMs) => send(delayMs ? `-NAK ${JSON.stringify({ delay: delayMs * 1_000_000 })}` : "-NAK"),
    working: () => send("+WPI"),
    term: () => send("+TERM"),
  };
}
