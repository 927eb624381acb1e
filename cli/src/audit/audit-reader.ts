/**
 * Reading the audit log (`GET /audit`): a listing of up to `limit` entries across pages, and following the log
 * for new entries as they are recorded.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { AUDIT_PAGE_MAX, compareAuditIds, latestAuditId, type AuditPage, type ListedAuditEntry } from "@corral/contracts";
import type { ApiClient } from "../http/api-client.js";

/** The query parameters of `GET /audit` a command passes on (`since`, `until`, `user`, `action`, `target`). */
export type AuditFilters = Readonly<Record<string, string>>;

/**
 * How far back of the newest entry seen a poll looks again: entries are recorded by several processes in batches
 * and with their own clocks, so one stored later may carry a slightly earlier time.
 */
export const LATE_ENTRY_MS = 10_000;

export interface AuditListing {
  /** Newest first. */
  entries: ListedAuditEntry[];
  /** The `after` that goes on past the last entry, when older ones may match. */
  next?: string;
}

/** Up to `limit` entries, newest first, following `next` from page to page (starting at `after` when given). */
export async function listAudit(client: ApiClient, filters: AuditFilters, limit: number, after?: string): Promise<AuditListing> {
  const entries: ListedAuditEntry[] = [];
  let next = after;
  for (;;) {
    const pageSize = Math.min(AUDIT_PAGE_MAX, limit - entries.length);
    const query: Record<string, string> = { ...filters, limit: String(pageSize), ...(next ? { after: next } : {}) };
    const page = await client.request<AuditPage>("GET", "/audit", { query });
    entries.push(...page.entries);
    next = page.next;
    if (!next || entries.length >= limit) return next ? { entries, next } : { entries };
  }
}

/** Every entry at or after `sinceMs`, newest first, all pages. */
async function entriesSince(client: ApiClient, filters: AuditFilters, sinceMs: number | undefined): Promise<ListedAuditEntry[]> {
  const query = sinceMs === undefined ? filters : { ...filters, since: String(sinceMs) };
  return (await listAudit(client, query, Number.MAX_SAFE_INTEGER)).entries;
}

/** Oldest first: by time, then by position in the log. */
export const oldestFirst = (a: ListedAuditEntry, b: ListedAuditEntry): number => Date.parse(a.time) - Date.parse(b.time) || compareAuditIds(a.id, b.id);

export interface FollowOptions {
  /** Between two polls. @default 2000 */
  intervalMs?: number;
  /** The newest entries shown before following, oldest first. @default 10 */
  initial?: number;
  /** Ends the follow (Ctrl-C ends the process anyway). */
  signal?: AbortSignal;
}

/**
 * The newest `initial` entries, then each entry recorded after them, oldest first within each poll, until the
 * signal aborts. An entry's `id` is its position in the log (its message's sequence and its place in it), and the
 * log only grows at its end, a batch of entries at once: an entry is new exactly when its id is after every id
 * seen, so none is shown twice. Each poll asks for entries since the newest
 * time seen less {@link LATE_ENTRY_MS}, so one stored late with an earlier time is not missed.
 */
export async function* followAudit(client: ApiClient, filters: AuditFilters, options: FollowOptions = {}): AsyncGenerator<ListedAuditEntry[]> {
  // The log's newest entry of any kind marks where "new" starts, even when none matches the filters yet.
  const anchor = (await client.request<AuditPage>("GET", "/audit", { query: { limit: "1" } })).entries[0];
  const shown = (await listAudit(client, filters, options.initial ?? 10)).entries.sort(oldestFirst);
  const userSinceMs = filters["since"] === undefined ? undefined : timeMs(filters["since"]);
  let highestId = latestAuditId([anchor, ...shown]);
  let newestMs = Math.max(Number.NEGATIVE_INFINITY, ...[anchor, ...shown].flatMap((e) => (e ? [Date.parse(e.time)] : [])));
  yield shown;
  while (!options.signal?.aborted) {
    try {
      await sleep(options.intervalMs ?? 2000, undefined, options.signal ? { signal: options.signal } : {});
    } catch {
      return;
    }
    const lookBack = Number.isFinite(newestMs) ? newestMs - LATE_ENTRY_MS : undefined;
    const sinceMs = lookBack === undefined ? userSinceMs : Math.max(lookBack, userSinceMs ?? lookBack);
    const fresh = (await entriesSince(client, filters, sinceMs)).filter((e) => compareAuditIds(e.id, highestId) > 0).sort(oldestFirst);
    highestId = latestAuditId(fresh, highestId);
    for (const entry of fresh) newestMs = Math.max(newestMs, Date.parse(entry.time));
    if (fresh.length > 0) yield fresh;
  }
}

/** `since` as the server reads it: milliseconds since the epoch, or ISO 8601. */
function timeMs(text: string): number | undefined {
  const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
