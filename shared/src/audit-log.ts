import type { NatsConnection } from "@nats-io/transport-node";
import { auditSubject, encode, type AuditEntry } from "@corral/contracts";
import { jsRequests } from "./js-requests.js";
import type { Logger } from "./log.js";
import { LabeledCounter } from "./metrics/series.js";
import type { MetricsRegistry } from "./metrics/registry.js";

/**
 * Where a process records audit entries (contracts/src/audit.ts). `record` only queues the entry: the request it
 * describes never waits for the audit stream, and never fails because of it. Queued entries are published together
 * every `lingerMs` (or as soon as `batchSize` are queued), their acknowledgements awaited off the request path;
 * an entry the stream did not take is counted (`corral_audit_entries_total{outcome="failed"}`) and logged.
 */
export interface AuditLog {
  record(entry: AuditEntry): void;
  /**
   * Publishes `entry` at once under `messageId` and resolves when the stream has it; rejects when it did not take
   * it. The stream drops an entry whose id it got within its duplicate window (10 minutes), so what is recorded
   * again after a crash is recorded once.
   */
  recordOnce(entry: AuditEntry, messageId: string): Promise<void>;
  /** Publishes what is queued and waits for it; records nothing after. */
  stop(): Promise<void>;
}

export interface AuditLogOptions {
  nc: NatsConnection;
  log: Logger;
  metrics?: MetricsRegistry;
  /** @default 20 */
  lingerMs?: number;
  /** @default 256 */
  batchSize?: number;
  /** Entries queued or in flight beyond this are dropped (and counted): a stream that is down costs bounded memory. @default 100000 */
  maxPending?: number;
}

/** A log line about failed entries at most this often. */
const FAILURE_LOG_INTERVAL_MS = 10_000;

export function openAuditLog(options: AuditLogOptions): AuditLog {
  const { nc, log } = options;
  const lingerMs = options.lingerMs ?? 20;
  const batchSize = options.batchSize ?? 256;
  const maxPending = options.maxPending ?? 100_000;
  const js = jsRequests(nc);
  const counter = new LabeledCounter(options.metrics, {
    name: "corral_audit_entries_total",
    help: "Audit entries by outcome: recorded in the audit stream, failed (the stream did not take them), dropped (too many pending)",
    labelNames: ["outcome"],
  });
  const recorded = counter.series({ outcome: "recorded" });
  const failed = counter.series({ outcome: "failed" });
  const dropped = counter.series({ outcome: "dropped" });
  let queue: AuditEntry[] = [];
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const flights = new Set<Promise<void>>();
  let failuresSinceLog = 0;
  let lastFailureLog = 0;

  const noteFailure = (count: number, err: unknown) => {
    failed.inc(count);
    failuresSinceLog += count;
    const now = Date.now();
    if (now - lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
    lastFailureLog = now;
    log.warn("audit entries were not recorded", { entries: failuresSinceLog, err });
    failuresSinceLog = 0;
  };

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    inFlight += batch.length;
    const flight = Promise.allSettled(batch.map((entry) => js.publish(auditSubject(entry.tenant), encode(entry)))).then((outcomes) => {
      inFlight -= batch.length;
      let failures = 0;
      let firstError: unknown;
      for (const outcome of outcomes) {
        if (outcome.status === "fulfilled") continue;
        failures++;
        firstError ??= outcome.reason;
      }
      if (batch.length > failures) recorded.inc(batch.length - failures);
      if (failures > 0) noteFailure(failures, firstError);
    });
    flights.add(flight);
    void flight.finally(() => flights.delete(flight));
  };

  return {
    record(entry) {
      if (stopped) return;
      if (queue.length + inFlight >= maxPending) return dropped.inc();
      queue.push(entry);
      if (queue.length >= batchSize) flush();
      else timer ??= setTimeout(flush, lingerMs);
    },
    async recordOnce(entry, messageId) {
      if (stopped) throw new Error("the audit log is stopped");
      try {
        await js.publish(auditSubject(entry.tenant), encode(entry), { msgId: messageId });
      } catch (err) {
        noteFailure(1, err);
        throw err;
      }
      recorded.inc();
    },
    async stop() {
      stopped = true;
      flush();
      await Promise.all([...flights]);
    },
  };
}
