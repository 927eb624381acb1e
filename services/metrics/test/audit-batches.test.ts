/**
 * The audit log's messages against a real nats-server: recorders publish one batch per tenant and flush (split
 * when large), `recordOnce` a single entry; `GET /audit`'s reader pages across and inside batches, newest first,
 * each entry once, and takes the plain `<seq>` cursors of single-entry messages.
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  auditSubject,
  compareAuditIds,
  decode,
  encode,
  streamSubjects,
  streams,
  type AuditEntry,
  type AuditMessage,
  type AuditPage,
  type ListedAuditEntry,
} from "@corral/contracts";
import { createMetricsRegistry, ensureStreams, openAuditLog, silentLogger, type AuditLogOptions } from "@corral/shared";
import { auditReader, resolveAuditQuery } from "@corral/metrics/testing";
import { testWithNats } from "../../../test/helpers/nats-test.js";

const test = testWithNats("audit-batches", (nc) => ensureStreams(nc));

const T0 = Date.parse("2026-11-28T12:00:00.000Z");
let made = 0;
function entryOf(tenant: string, target = `t-${made}`): AuditEntry {
  made++;
  return {
    time: new Date(T0 + made).toISOString(),
    tenant,
    user: "opsa",
    role: "admin",
    method: "POST",
    route: "/services",
    action: "tenancy.catalog.services.create",
    target,
    status: 200,
    requestId: `r-${made}`,
    source: "127.0.0.1",
  };
}

/** Records `entries` with a log of their own, and waits until the stream has them (one flush when they fit one). */
async function recordAll(nc: NatsConnection, entries: readonly AuditEntry[], options: Partial<AuditLogOptions> = {}): Promise<void> {
  const log = openAuditLog({ nc, log: silentLogger, lingerMs: 60_000, batchSize: 100_000, ...options });
  for (const entry of entries) log.record(entry);
  await log.stop();
}

interface Stored {
  seq: number;
  subject: string;
  bytes: number;
  message: AuditMessage;
}

async function storedMessages(nc: NatsConnection): Promise<Stored[]> {
  const jsm = await jetstreamManager(nc);
  const { state } = await jsm.streams.info(streams.audit);
  const out: Stored[] = [];
  for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(streams.audit, { seq });
    if (!m) continue;
    out.push({ seq, subject: m.subject, bytes: m.data.length, message: decode<AuditMessage>(m.data) });
  }
  return out;
}

const byRequest = (a: AuditEntry, b: AuditEntry) => a.requestId.localeCompare(b.requestId);
const purge = async (nc: NatsConnection) => (await jetstreamManager(nc)).streams.purge(streams.audit);

/** Every page of `scope` with `limit`, following `next` (each page's `after` checked to be the previous `next`). */
async function allPages(nc: NatsConnection, scope: string, limit: number, after?: string): Promise<{ entries: ListedAuditEntry[]; pages: number }> {
  const reader = auditReader(nc);
  const entries: ListedAuditEntry[] = [];
  let next = after;
  let pages = 0;
  do {
    const page: AuditPage = await reader.page(scope, resolveAuditQuery({ limit, ...(next ? { after: next } : {}) }));
    if (page.entries.length > limit) throw new Error(`a page of ${page.entries.length} for a limit of ${limit}`);
    entries.push(...page.entries);
    next = page.next;
    pages++;
  } while (next && pages < 10_000);
  return { entries, pages };
}

test.serial("a flush is one message per tenant, its entries in order; tenants never share one", async (t) => {
  const { nc } = t.context;
  await purge(nc);
  const registry = createMetricsRegistry();
  const tenants = ["acme", "beta", ""];
  const entries = Array.from({ length: 300 }, (_, i) => entryOf(tenants[i % 3]!));
  await recordAll(nc, entries, { metrics: registry });
  const stored = await storedMessages(nc);
  t.is(stored.length, 3, "one message per tenant");
  for (const tenant of tenants) {
    const mine = stored.filter((m) => m.subject === auditSubject(tenant));
    t.is(mine.length, 1, `tenant "${tenant}"`);
    const message = mine[0]!.message;
    t.true("batch" in message && message.batch === 1);
    const held = (message as { entries: AuditEntry[] }).entries;
    t.deepEqual(held, entries.filter((e) => e.tenant === tenant), "the tenant's entries, in the order recorded, no other's");
  }
  const counted = (await registry.getSingleMetric("corral_audit_entries_total")?.get())?.values.find((v) => v.labels["outcome"] === "recorded");
  t.is(counted?.value, 300, "the counter counts entries, not messages");
});

test.serial("a batch larger than maxMessageBytes is split, in order; none passes it", async (t) => {
  const { nc } = t.context;
  await purge(nc);
  const entries = Array.from({ length: 200 }, () => entryOf("acme"));
  const maxMessageBytes = 4096;
  await recordAll(nc, entries, { maxMessageBytes });
  const stored = await storedMessages(nc);
  t.true(stored.length > 1);
  t.true(stored.every((m) => m.bytes <= maxMessageBytes), JSON.stringify(stored.map((m) => m.bytes)));
  t.deepEqual(
    stored.flatMap((m) => (m.message as { entries: AuditEntry[] }).entries),
    entries,
  );
  // An entry larger than the limit alone still goes, alone.
  await purge(nc);
  const large = entryOf("acme", "x".repeat(8000));
  await recordAll(nc, [entryOf("acme"), large, entryOf("acme")], { maxMessageBytes });
  const split = await storedMessages(nc);
  t.true(split.some((m) => (m.message as { entries: AuditEntry[] }).entries.length === 1 && m.bytes > maxMessageBytes));
  t.is(split.flatMap((m) => (m.message as { entries: AuditEntry[] }).entries).length, 3);
});

test.serial("recordOnce stores the entry alone under its message id, once", async (t) => {
  const { nc } = t.context;
  await purge(nc);
  const log = openAuditLog({ nc, log: silentLogger });
  const entry = entryOf("acme");
  await log.recordOnce(entry, "plan-end.acme.p1");
  await log.recordOnce(entry, "plan-end.acme.p1");
  await log.stop();
  const stored = await storedMessages(nc);
  t.is(stored.length, 1);
  t.deepEqual(stored[0]!.message, entry);
});

test.serial("pages go newest first across and inside batches, each entry once, with any page size", async (t) => {
  const { nc } = t.context;
  await purge(nc);
  // Single entries, batches of two tenants (interleaved) and an entry of no tenant, in this order.
  const recorded: AuditEntry[] = [];
  const single = async (tenant: string) => {
    const entry = entryOf(tenant);
    recorded.push(entry);
    const log = openAuditLog({ nc, log: silentLogger });
    await log.recordOnce(entry, `once-${entry.requestId}`);
    await log.stop();
  };
  const batch = async (count: number) => {
    const entries = Array.from({ length: count }, (_, i) => entryOf(i % 4 === 3 ? "beta" : i % 9 === 5 ? "" : "acme"));
    recorded.push(...entries);
    await recordAll(nc, entries);
  };
  await single("acme");
  await batch(40);
  await single("beta");
  await single("acme");
  await batch(13);
  await batch(1);
  await single("acme");
  t.true((await storedMessages(nc)).some((m) => "batch" in m.message && m.message.entries.length > 20), "a large batch is stored");

  // A tenant's entries are in the order recorded; across tenants, in the order of their messages.
  const stored = (await storedMessages(nc)).flatMap((m) => ("batch" in m.message ? m.message.entries : [m.message]));
  t.deepEqual([...stored].sort(byRequest), [...recorded].sort(byRequest));
  const expected = (tenant?: string) =>
    (tenant === undefined ? stored : recorded.filter((e) => e.tenant === tenant)).map((e) => e.requestId).reverse();
  for (const [scope, tenant] of [
    [auditSubject("acme"), "acme"],
    [auditSubject("beta"), "beta"],
    [streamSubjects[streams.audit], undefined],
  ] as const) {
    for (const limit of [1, 2, 3, 7, 10, 29, 1000]) {
      const { entries, pages } = await allPages(nc, scope, limit);
      t.deepEqual(
        entries.map((e) => e.requestId),
        expected(tenant),
        `${scope}, pages of ${limit}: each entry once, newest first`,
      );
      // A full last page may still say `next` (older entries of other tenants may follow): one empty page more.
      const full = Math.max(1, Math.ceil(entries.length / limit));
      t.true(pages === full || pages === full + 1, `${pages} pages of ${limit} for ${entries.length}`);
      t.true(
        entries.every((e, i) => i === 0 || compareAuditIds(entries[i - 1]!.id, e.id) > 0),
        "ids go back in log order",
      );
      t.true(entries.every((e) => /^[1-9][0-9]*\.[0-9]+$/.test(e.id)));
      t.true(entries.every((e) => tenant === undefined || e.tenant === tenant));
    }
  }

  // `after` an entry inside a batch goes on with the entry recorded just before it, in the same message.
  const acme = (await allPages(nc, auditSubject("acme"), 1000)).entries;
  const inside = acme.findIndex((e, i) => i > 0 && e.id.split(".")[0] === acme[i - 1]!.id.split(".")[0]);
  t.true(inside > 0);
  const from = await allPages(nc, auditSubject("acme"), 5, acme[inside - 1]!.id);
  t.deepEqual(from.entries, acme.slice(inside));

  // A plain `<seq>` (a cursor from before batches) means the entries of the messages before that one.
  const seqOf = (e: ListedAuditEntry) => Number(e.id.split(".")[0]);
  const batched = acme.find((e) => !e.id.endsWith(".0"))!;
  const plain = await allPages(nc, auditSubject("acme"), 1000, String(seqOf(batched)));
  t.deepEqual(plain.entries, acme.filter((e) => seqOf(e) < seqOf(batched)));
  t.deepEqual((await allPages(nc, auditSubject("acme"), 1000, `${seqOf(batched)}.0`)).entries, plain.entries);
});

test.serial("a message of a batch version not known, or of neither form, is skipped", async (t) => {
  const { nc } = t.context;
  await purge(nc);
  const js = jetstream(nc);
  const kept = entryOf("acme");
  await js.publish(auditSubject("acme"), encode({ batch: 2, entries: [entryOf("acme")] }));
  await js.publish(auditSubject("acme"), encode("what"));
  await recordAll(nc, [kept]);
  const { entries } = await allPages(nc, auditSubject("acme"), 10);
  t.deepEqual(entries.map((e) => e.requestId), [kept.requestId]);
});
