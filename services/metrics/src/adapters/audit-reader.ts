import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { decode, streams, type AuditEntry, type AuditPage } from "@corral/contracts";
import { jsRequests } from "@corral/shared";
import { matchesAudit, type AuditQuery } from "../domain/audit-query.js";

/** Entries one page read looks at most; a page that ran out of it is shorter, and its `next` goes on from there. */
export const AUDIT_SCAN_BUDGET = 20_000;
/** The first window read back from the newest end; each next one is twice as large, up to {@link MAX_WINDOW}. */
const FIRST_WINDOW = 64;
const MAX_WINDOW = 4096;

export interface AuditReader {
  /** One page of the entries on `subjectFilter` that match `query`, newest first. */
  page(subjectFilter: string, query: AuditQuery): Promise<AuditPage>;
}

/**
 * Reads the audit stream backwards: JetStream reads forwards only, so windows of sequences are read from their
 * start by direct gets on the subject filter (the server skips other tenants' entries) and kept newest first,
 * each window further back, until the page is full, the entries are older than `since`, or the budget is spent.
 */
export function auditReader(nc: NatsConnection): AuditReader {
  const js = jsRequests(nc);
  return {
    async page(subjectFilter, query) {
      const jsm = await jetstreamManager(nc);
      const { state } = await jsm.streams.info(streams.audit);
      const entries: AuditPage["entries"] = [];
      let high = Math.min(state.last_seq, (query.beforeSeq ?? Number.MAX_SAFE_INTEGER) - 1);
      let window = FIRST_WINDOW;
      let scanned = 0;
      while (high >= state.first_seq && high > 0) {
        const low = Math.max(state.first_seq, high - window + 1, 1);
        const found: Array<{ seq: number; entry: AuditEntry }> = [];
        for (let next = low; next <= high; ) {
          const stored = await js.nextBySubject(streams.audit, subjectFilter, next);
          if (!stored || stored.seq > high) break;
          found.push({ seq: stored.seq, entry: decode<AuditEntry>(stored.data) });
          next = stored.seq + 1;
        }
        for (let i = found.length - 1; i >= 0; i--) {
          const { seq, entry } = found[i]!;
          scanned++;
          // Entries are in the order they were recorded; gateways' clocks and batches disorder them by little.
          if (query.sinceMs !== undefined && Date.parse(entry.time) < query.sinceMs) return { entries };
          if (!matchesAudit(entry, query)) continue;
          entries.push({ id: String(seq), ...entry });
          if (entries.length === query.limit) return seq > state.first_seq ? { entries, next: String(seq) } : { entries };
        }
        scanned += Math.max(0, high - low + 1 - found.length);
        if (scanned >= AUDIT_SCAN_BUDGET && low > state.first_seq) return { entries, next: String(low) };
        high = low - 1;
        window = Math.min(window * 2, MAX_WINDOW);
      }
      return { entries };
    },
  };
}
