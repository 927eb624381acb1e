/**
 * Following the audit log against a log kept in memory that answers `GET /audit` as the metrics service does
 * (newest first by position, a scan that stops at the first entry older than `since`, pages of `limit` with
 * `next`): entries stored late with an earlier time, more new entries than a page holds, and batches (ids
 * `<seq>.<index>`), are each printed once.
 */
import test from "ava";
import { compareAuditIds, type AuditPage, type ListedAuditEntry } from "@corral/contracts";
import { followAudit, listAudit } from "../src/audit/audit-reader.js";
import { auditLineWriter } from "../src/audit/audit-views.js";
import type { ApiClient } from "../src/http/api-client.js";

function memoryLog() {
  const entries: ListedAuditEntry[] = [];
  let seq = 0;
  const entryOf = (id: string, timeMs: number, target: string, user = "opsa"): ListedAuditEntry => ({
      id,
      time: new Date(timeMs).toISOString(),
      tenant: "acme",
      user,
      role: "admin",
      method: "POST",
      route: "/services",
      action: "tenancy.catalog.services.create",
      target,
      status: 200,
      requestId: `r-${target}`,
      source: "127.0.0.1",
    });
  /** One entry alone in its message: id `<seq>` (as before batches). */
  const append = (timeMs: number, target: string, user = "opsa") => entries.push(entryOf(String(++seq), timeMs, target, user));
  /** One message holding a batch of entries: ids `<seq>.<index>`. */
  const appendBatch = (timeMs: number, targets: readonly string[]) => {
    seq++;
    targets.forEach((target, index) => entries.push(entryOf(`${seq}.${index}`, timeMs, target)));
  };
  const page = (query: Readonly<Record<string, string>>): AuditPage => {
    const limit = Number(query["limit"] ?? 100);
    const since = query["since"] === undefined ? undefined : Number(query["since"]);
    const before = query["after"];
    const found: ListedAuditEntry[] = [];
    for (const entry of [...entries].reverse()) {
      if (before !== undefined && compareAuditIds(entry.id, before) >= 0) continue;
      if (since !== undefined && Date.parse(entry.time) < since) return { entries: found };
      if (query["user"] !== undefined && entry.user !== query["user"]) continue;
      found.push(entry);
      if (found.length === limit) return entry === entries[0] ? { entries: found } : { entries: found, next: entry.id };
    }
    return { entries: found };
  };
  const client = {
    baseUrl: "memory",
    headers: () => ({}),
    urlOf: (path: string) => path,
    request: async <T>(_method: string, path: string, options: { query?: Readonly<Record<string, string>> } = {}): Promise<T> => {
      if (path !== "/audit") throw new Error(`unexpected ${path}`);
      return page(options.query ?? {}) as T;
    },
  } as ApiClient;
  return { append, appendBatch, client };
}

test("follow - late and many entries are printed once each, oldest first", async (t) => {
  const log = memoryLog();
  const t0 = Date.parse("2026-01-01T00:00:00Z");
  for (let i = 0; i < 30; i++) log.append(t0 + i * 1000, `old-${i}`);
  const abort = new AbortController();
  const polls: string[][] = [];
  const steps = [
    () => log.append(t0 + 40_000, "new-1"),
    // Stored after new-1 by a process whose clock or batch is 3 s behind.
    () => log.append(t0 + 37_000, "late"),
    // More than a page (1000) at once.
    () => Array.from({ length: 1500 }, (_, i) => log.append(t0 + 41_000 + i, `burst-${i}`)),
    () => abort.abort(),
  ];
  // An entry missed would leave the steps waiting for it: end after a while instead.
  const giveUp = setTimeout(() => abort.abort(), 5_000);
  for await (const entries of followAudit(log.client, {}, { intervalMs: 1, initial: 5, signal: abort.signal })) {
    polls.push(entries.map((e) => e.target));
    steps[polls.length - 1]?.();
  }
  clearTimeout(giveUp);
  t.deepEqual(polls[0], ["old-25", "old-26", "old-27", "old-28", "old-29"], "the newest 5, oldest first");
  const followed = polls.slice(1).flat();
  t.deepEqual(followed, ["new-1", "late", ...Array.from({ length: 1500 }, (_, i) => `burst-${i}`)]);
});

test("follow - entries of batches, in one time and past index 9, are printed once each, in log order", async (t) => {
  const log = memoryLog();
  const t0 = Date.parse("2026-01-01T00:00:00Z");
  for (let i = 0; i < 5; i++) log.append(t0 + i, `old-${i}`);
  log.appendBatch(t0 + 10, Array.from({ length: 12 }, (_, i) => `first-${i}`));
  const abort = new AbortController();
  const polls: string[][] = [];
  const steps = [
    () => log.appendBatch(t0 + 20, Array.from({ length: 25 }, (_, i) => `second-${i}`)),
    () => {
      log.appendBatch(t0 + 30, ["third-0", "third-1"]);
      log.append(t0 + 30, "single");
    },
    () => abort.abort(),
  ];
  const giveUp = setTimeout(() => abort.abort(), 5_000);
  for await (const entries of followAudit(log.client, {}, { intervalMs: 1, initial: 15, signal: abort.signal })) {
    polls.push(entries.map((e) => e.target));
    steps[polls.length - 1]?.();
  }
  clearTimeout(giveUp);
  t.deepEqual(polls[0], ["old-2", "old-3", "old-4", ...Array.from({ length: 12 }, (_, i) => `first-${i}`)]);
  t.deepEqual(polls.slice(1).flat(), [...Array.from({ length: 25 }, (_, i) => `second-${i}`), "third-0", "third-1", "single"]);

  // Listing in pages that end inside a batch gives each entry once.
  const listed: string[] = [];
  let after: string | undefined;
  do {
    const page = await listAudit(log.client, {}, 4, after);
    listed.push(...page.entries.map((e) => e.target));
    after = page.next;
  } while (after);
  t.is(listed.length, 5 + 12 + 25 + 3);
  t.is(new Set(listed).size, listed.length);
  t.deepEqual(listed.slice(0, 6), ["single", "third-1", "third-0", "second-24", "second-23", "second-22"]);
});

test("follow - with a filter that matches nothing yet, polls still look back only from the log's newest entry", async (t) => {
  const log = memoryLog();
  const t0 = Date.parse("2026-01-01T00:00:00Z");
  for (let i = 0; i < 20; i++) log.append(t0 + i * 1000, `other-${i}`, "bob");
  const queries: Array<Readonly<Record<string, string>>> = [];
  const request = log.client.request.bind(log.client);
  const client = { ...log.client, request: ((method, path, options) => (queries.push(options?.query ?? {}), request(method, path, options))) as ApiClient["request"] };
  const abort = new AbortController();
  const polls: string[][] = [];
  for await (const entries of followAudit(client, { user: "carol" }, { intervalMs: 1, signal: abort.signal })) {
    polls.push(entries.map((e) => e.target));
    if (polls.length === 1) log.append(t0 + 60_000, "mine", "carol");
    else abort.abort();
  }
  t.deepEqual(polls, [[], ["mine"]]);
  const polled = queries.slice(2);
  t.true(polled.length > 0 && polled.every((q) => q["since"] === String(t0 + 19_000 - 10_000)), JSON.stringify(polled));
});

test("list - --limit across pages, and next goes on", async (t) => {
  const log = memoryLog();
  for (let i = 0; i < 2500; i++) log.append(i, `e-${i}`);
  const first = await listAudit(log.client, {}, 1200);
  t.is(first.entries.length, 1200);
  t.is(first.entries[0]?.target, "e-2499");
  const rest = await listAudit(log.client, {}, 5000, first.next);
  t.is(rest.entries.length, 1300);
  t.is(rest.next, undefined);
  t.is(rest.entries.at(-1)?.target, "e-0");
});

test("follow lines - the table's header once, columns widening as values need; json one entry a line", (t) => {
  let text = "";
  const print = auditLineWriter("table", (s) => (text += s));
  const [a, b] = [
    { id: "1", time: "2026-01-01T00:00:00.000Z", tenant: "acme", user: "opsa", role: "admin" as const, method: "POST", route: "/services", action: "x", target: "a", status: 200, requestId: "r1", source: "" },
    { id: "2", time: "2026-01-01T00:00:01.000Z", tenant: "", user: "", role: "" as const, method: "GET", route: "/services", action: "x", target: "a-much-longer-target", status: 401, requestId: "r2", source: "" },
  ];
  print([a]);
  print([]);
  print([b]);
  t.deepEqual(text.split("\n"), [
    "TIME                      TENANT  USER  METHOD  ROUTE      TARGET  STATUS",
    "2026-01-01T00:00:00.000Z  acme    opsa  POST    /services  a       200",
    "2026-01-01T00:00:01.000Z  -       -     GET     /services  a-much-longer-target  401",
    "",
  ]);
  let json = "";
  auditLineWriter("json", (s) => (json += s))([a, b]);
  t.deepEqual(json.trim().split("\n").map((line) => JSON.parse(line).id), ["1", "2"]);
});
