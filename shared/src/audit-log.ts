import type { NatsConnection } from "@nats-io/transport-node";
import { AUDIT_BATCH_VERSION, auditSubject, encode, type AuditBatch, type AuditEntry } from "@corral/contracts";
import { jsRequests } from "./js-requests.js";
import type { Logger } from "./log.js";
import { LabeledCounter } from "./metrics/series.js";
import type { MetricsRegistry } from "./metrics/registry.js";

/**
 * Where a process records audit entries (contracts/src/audit.ts). `record` only queues the entry: the request it
 * describes never waits for the audit stream, and never fails because of it. Queued entries are published every
 * `lingerMs` (or as soon as `batchSize` are queued), each tenant's in one message (an `AuditBatch` on the tenant's
 * subject, split when it would pass `maxMessageBytes`), their acknowledgements awaited off the request path: the
 * stream stores and syncs a message per tenant and flush, not per entry. An entry the stream did not take is
 * counted (`corral_audit_entries_total{outcome="failed"}`) and logged.
 */
export interface AuditLog {
  record(entry: AuditEntry): void;
  /**
   * Publishes `entry` at once, alone in its message, under `messageId` and resolves when the stream has it; rejects
   * when it did not take it. The stream drops an entry whose id it got within its duplicate window (10 minutes), so
   * what is recorded again after a crash is recorded once.
   */
  recordOnce(entry: AuditEntry, messageId: string): Promise<void>;
  /** Publishes what is queued and waits for it; records nothing after. */
  stop(): Promise<void>;
}

export interface AuditLogOptions {
  nc: NatsConnection;
  log: Logger;
  metrics?: MetricsRegistry;
  /**
   * How long an entry waits for others to share its message. A message costs the same whatever it holds (~1 ms of
   * the publishing process's CPU and ~0.5 ms of nats-server's, which syncs it), so this bounds the messages a
   * process publishes to 10 a second per tenant at low rates; at high ones `batchSize` fills first. @default 100
   */
  lingerMs?: number;
  /** @default 256 */
  batchSize?: number;
  /** Entries queued or in flight beyond this are dropped (and counted): a stream that is down costs bounded memory. @default 100000 */
  maxPending?: number;
  /**
   * A batch message larger than this (or than the server's `max_payload`) is split in two, again as needed; an
   * entry larger alone goes alone. @default 262144
   */
  maxMessageBytes?: number;
}

/** One message to publish: its subject, its bytes and how many entries it holds. */
interface AuditMessageOut {
  subject: string;
  data: Uint8Array;
  entries: number;
}

/** Each tenant's entries in order of recording, tenants in order of their first entry. */
function byTenant(entries: readonly AuditEntry[]): AuditEntry[][] {
  const groups = new Map<string, AuditEntry[]>();
  for (const entry of entries) {
    const group = groups.get(entry.tenant);
    if (group) group.push(entry);
    else groups.set(entry.tenant, [entry]);
  }
  return [...groups.values()];
}

/** One tenant's entries as batch messages of at most `maxBytes` (halved until they fit; one entry is never split). */
function batchMessages(subject: string, entries: AuditEntry[], maxBytes: number): AuditMessageOut[] {
  const batch: AuditBatch = { batch: AUDIT_BATCH_VERSION, entries };
  const data = encode(batch);
  if (data.length <= maxBytes || entries.length === 1) return [{ subject, data, entries: entries.length }];
  const half = Math.ceil(entries.length / 2);
  return [...batchMessages(subject, entries.slice(0, half), maxBytes), ...batchMessages(subject, entries.slice(half), maxBytes)];
}

/** A log line about failed entries at most this often. */
const FAILURE_LOG_INTERVAL_MS = 10_000;

export function openAuditLog(options: AuditLogOptions): AuditLog {
  const { nc, log } = options;
  const lingerMs = options.lingerMs ?? 100;
  const batchSize = options.batchSize ?? 256;
  const maxPending = options.maxPending ?? 100_000;
  const maxMessageBytes = Math.min(options.maxMessageBytes ?? 256 * 1024, nc.info?.max_payload ?? Number.POSITIVE_INFINITY);
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
    const messages = byTenant(batch).flatMap((entries) => batchMessages(auditSubject(entries[0]!.tenant), entries, maxMessageBytes));
    const flight = Promise.allSettled(messages.map((m) => js.publish(m.subject, m.data))).then((outcomes) => {
      inFlight -= batch.length;
      let failures = 0;
      let firstError: unknown;
      outcomes.forEach((outcome, i) => {
        if (outcome.status === "fulfilled") return;
        failures += messages[i]!.entries;
        firstError ??= outcome.reason;
      });
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
