import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { auditIdOf, decode, entriesOfAuditMessage, streams, type AuditEntry, type AuditPage } from "@corral/contracts";
import { jsRequests } from "@corral/shared";
import { matchesAudit, type AuditQuery } from "../domain/audit-query.js";

/** Entries one page read looks at most; a page that ran out of it is shorter, and its `next` goes on from there. */
export const AUDIT_SCAN_BUDGET = 20_000;
/** The entries the first window read back from the newest end is sized for; each next one twice as many, up to {@link MAX_WINDOW}. */
const FIRST_WINDOW = 64;
const MAX_WINDOW = 4096;

export interface AuditReader {
  /** One page of the entries on `subjectFilter` that match `query`, newest first. */
  page(subjectFilter: string, query: AuditQuery): Promise<AuditPage>;
}

/**
 * Reads the audit stream backwards: JetStream reads forwards only, so windows of sequences are read from their
 * start by direct gets on the subject filter (the server skips other tenants' messages) and walked newest first,
 * each window further back, until the page is full, the entries are older than `since`, or the budget is spent.
 * A message holds one entry or a batch of them (oldest first); an entry's id is its message's sequence and its
 * place in it, so a page may end, and the next begin, inside a batch. A window spans as many messages as hold
 * about the entries it is sized for, judging by the messages read so far.
 */
export function auditReader(nc: NatsConnection): AuditReader {
  const js = jsRequests(nc);
  return {
    async page(subjectFilter, query) {
      const jsm = await jetstreamManager(nc);
      const { state } = await jsm.streams.info(streams.audit);
      const entries: AuditPage["entries"] = [];
      const before = query.before ?? { seq: Number.MAX_SAFE_INTEGER, index: 0 };
      // The message `before` names holds older entries when `before` is not its first.
      let high = Math.min(state.last_seq, before.index > 0 ? before.seq : before.seq - 1);
      let windowEntries = FIRST_WINDOW;
      let scanned = 0;
      let messagesRead = 0;
      let entriesRead = 0;
      while (high >= state.first_seq && high > 0) {
        const perMessage = messagesRead === 0 ? 1 : Math.max(1, entriesRead / messagesRead);
        const window = Math.max(1, Math.floor(windowEntries / perMessage));
        const low = Math.max(state.first_seq, high - window + 1, 1);
        const found: Array<{ seq: number; held: AuditEntry[] }> = [];
        for (let next = low; next <= high; ) {
          const stored = await js.nextBySubject(streams.audit, subjectFilter, next);
          if (!stored || stored.seq > high) break;
          const held = entriesOfAuditMessage(decode(stored.data));
          found.push({ seq: stored.seq, held });
          messagesRead++;
          entriesRead += held.length;
          next = stored.seq + 1;
        }
        for (let i = found.length - 1; i >= 0; i--) {
          const { seq, held } = found[i]!;
          const top = seq === before.seq ? Math.min(before.index, held.length) : held.length;
          for (let index = top - 1; index >= 0; index--) {
            const entry = held[index]!;
            scanned++;
            // Entries are in the order they were recorded; gateways' clocks and batches disorder them by little.
            if (query.sinceMs !== undefined && Date.parse(entry.time) < query.sinceMs) return { entries };
            if (!matchesAudit(entry, query)) continue;
            const id = auditIdOf({ seq, index });
            entries.push({ id, ...entry });
            if (entries.length === query.limit) return seq > state.first_seq || index > 0 ? { entries, next: id } : { entries };
          }
        }
        scanned += Math.max(0, high - low + 1 - found.length);
        if (scanned >= AUDIT_SCAN_BUDGET && low > state.first_seq) return { entries, next: auditIdOf({ seq: low, index: 0 }) };
        high = low - 1;
        windowEntries = Math.min(windowEntries * 2, MAX_WINDOW);
      }
      return { entries };
    },
  };
}
