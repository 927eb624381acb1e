/**
 * Node-usage benchmark (issue 5 "Metrics"; target: a query < 50 ms with a million recorded node lifetimes).
 * Run: `node --import=tsx bench/metrics/node-usage.ts [lifetimes]`  -> bench/results/metrics-node-usage.json
 *
 * 1. Starts a loopback redis-server (no persistence) and generates node lifetimes with a seeded PRNG: clusters
 *    of 1-20 nodes over two years in 50 tenants, 40 users each drawn from 200 names (so user names span
 *    tenants); nodes of a cluster come within 30 s of each other; lives from 5 minutes to 60 days (log-uniform);
 *    5 % of clusters still open; 1 % of deletions delivered before their creation, 1 % of events twice.
 * 2. Records them through the production path (the store's Lua script), events in time order as the stream
 *    delivers them, in batches of 512, 4 batches in flight.
 * 3. Times random queries (scope: all, tenant, tenant + user, user; window: 1 hour to 2 years, 10 % with the
 *    default start) at the store and through the metrics service over NATS, and checks a sample against the
 *    definition computed in memory (services/metrics/test/usage-oracle.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "redis";
import { startNats, startRedis } from "@corral/deploy";
import type { Identity } from "@corral/contracts";
import { callEndpoint, connectNats, silentLogger } from "@corral/shared";
import { startMetricsService } from "@corral/metrics";
import { createRedisUsageStore, type NodeEvent, type RedisClient, type UsageScope } from "@corral/metrics/testing";
import { oracleUsage, replay, type OracleNode } from "../../services/metrics/test/usage-oracle.js";

const here = dirname(fileURLToPath(import.meta.url));
const OUT = join(here, "../results/metrics-node-usage.json");
const LIFETIMES = Number(process.argv[2] ?? 1_000_000);
const TENANTS = 50;
const USERS_PER_TENANT = 40;
const USER_NAMES = 200;
const HISTORY = 2 * 365 * 86400;
const T0 = 1_700_000_000;
const NOW = T0 + HISTORY;
const QUERIES = 2000;
const CHECKED = 200;

function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = mulberry32(20261121);
const int = (n: number) => Math.floor(rnd() * n);
const round = (x: number) => Math.round(x * 1000) / 1000;
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const stats = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return { p50Ms: round(pct(s, 50)), p99Ms: round(pct(s, 99)), maxMs: round(s[s.length - 1]!), meanMs: round(s.reduce((a, b) => a + b, 0) / s.length) };
};

// 1. lifetimes and their events
const tenantUsers = Array.from({ length: TENANTS }, () => Array.from({ length: USERS_PER_TENANT }, () => `user-${int(USER_NAMES)}`));
const events: NodeEvent[] = [];
let nodes = 0;
let clusters = 0;
let openNodes = 0;
while (nodes < LIFETIMES) {
  const ti = int(TENANTS);
  const tenant = `tenant-${ti}`;
  const ownerId = tenantUsers[ti]![int(USERS_PER_TENANT)]!;
  const clusterId = String(++clusters).padStart(8, "0");
  const size = 1 + int(20);
  const start = T0 + int(HISTORY);
  const life = Math.round(300 * Math.exp(rnd() * Math.log((60 * 86400) / 300)));
  const isOpen = rnd() < 0.05 || start + life > NOW - 60;
  for (let i = 0; i < size && nodes < LIFETIMES; i++, nodes++) {
    const nodeId = `${clusterId}-${i}`;
    const base = { tenant, clusterId, nodeId, ownerId };
    events.push({ kind: "created", ...base, timeSeconds: start + int(30) });
    if (isOpen) openNodes++;
    else events.push({ kind: "deleted", ...base, timeSeconds: start + life + int(30) });
  }
}
// Delivery order: by time, except 1 % of deletions delivered just before their creation; 1 % of events twice.
events.sort((a, b) => a.timeSeconds - b.timeSeconds);
const keyOf = (e: NodeEvent) => `${e.clusterId}/${e.nodeId}`;
const early = new Map<string, NodeEvent>();
for (const e of events) if (e.kind === "deleted" && rnd() < 0.01) early.set(keyOf(e), e);
const swapped: NodeEvent[] = [];
for (const e of events) {
  const jumped = early.get(keyOf(e));
  if (jumped && e.kind === "deleted") continue;
  if (jumped) swapped.push(jumped);
  swapped.push(e);
  if (rnd() < 0.01) swapped.push(e);
}
console.log(`${nodes} node lifetimes in ${clusters} clusters, ${openNodes} open; ${swapped.length} events to deliver`);

// 2. record them
const redis = await startRedis();
const client = createClient({ url: redis.url }) as RedisClient;
await client.connect();
const store = createRedisUsageStore(client);
const BATCH = 512;
const IN_FLIGHT = 4;
const loadStart = performance.now();
let next = 0;
let applied = 0;
await Promise.all(
  Array.from({ length: IN_FLIGHT }, async () => {
    for (;;) {
      const from = next;
      next += BATCH;
      if (from >= swapped.length) return;
      const changed = await store.apply(swapped.slice(from, from + BATCH));
      applied += changed;
    }
  }),
);
const loadSeconds = (performance.now() - loadStart) / 1000;
const memory = Object.fromEntries(
  (await client.info("memory"))
    .split(/\r?\n/)
    .map((l) => l.split(":"))
    .filter((kv) => kv.length === 2),
) as Record<string, string>;
const keys = await client.dbSize();
console.log(`loaded in ${loadSeconds.toFixed(1)} s (${Math.round(swapped.length / loadSeconds)} events/s); ${memory["used_memory_human"]}, ${keys} keys`);

// 3. queries
const oracleNodes: OracleNode[] = [...replay(swapped).values()];
const randomScope = (): UsageScope => {
  const k = int(4);
  const ti = int(TENANTS);
  if (k === 0) return { kind: "all" };
  if (k === 1) return { kind: "tenant", tenant: `tenant-${ti}` };
  if (k === 2) return { kind: "tenantUser", tenant: `tenant-${ti}`, user: tenantUsers[ti]![int(USERS_PER_TENANT)]! };
  return { kind: "user", user: `user-${int(USER_NAMES)}` };
};
const randomWindow = (): { start?: number; end: number } => {
  const length = Math.round(3600 * Math.exp(rnd() * Math.log(HISTORY / 3600)));
  const end = T0 + length + int(HISTORY - length + 86400);
  return rnd() < 0.1 ? { end } : { start: end - length, end };
};
const queries = Array.from({ length: QUERIES }, () => ({ scope: randomScope(), window: randomWindow() }));

for (const q of queries.slice(0, 50)) await store.usage(q.scope, q.window, NOW); // warm-up
const byKind: Record<string, number[]> = { all: [], tenant: [], tenantUser: [], user: [] };
const storeMs: number[] = [];
for (const q of queries) {
  const s = performance.now();
  await store.usage(q.scope, q.window, NOW);
  const ms = performance.now() - s;
  storeMs.push(ms);
  byKind[q.scope.kind]!.push(ms);
}

let mismatches = 0;
const checkStart = performance.now();
for (const q of queries.slice(0, CHECKED)) {
  const got = await store.usage(q.scope, q.window, NOW);
  const want = oracleUsage(oracleNodes, q.scope, q.window, NOW);
  if (got.value !== want.value || got.start !== want.start) {
    mismatches++;
    if (mismatches <= 5) console.log("MISMATCH", JSON.stringify({ q, got, want }));
  }
}
console.log(`checked ${CHECKED} answers against the definition in ${((performance.now() - checkStart) / 1000).toFixed(1)} s: ${mismatches} mismatches`);

// Worst case for one query: every second of two days holds creations and deletions, so the hashes an edge reads
// are full (1024 seconds in a page, 64 pages in a block, 64 blocks in an era).
const dense = createRedisUsageStore(client, { keyPrefix: "dense:" });
const DENSE_NODES = 200_000;
const D0 = T0 + 100 * 86400;
const denseEvents: NodeEvent[] = [];
for (let i = 0; i < DENSE_NODES; i++) {
  const base = { tenant: "dense", clusterId: String(Math.floor(i / 20)), nodeId: String(i), ownerId: "u" };
  const created = D0 + (i % 172800);
  denseEvents.push({ kind: "created", ...base, timeSeconds: created });
  denseEvents.push({ kind: "deleted", ...base, timeSeconds: created + 1 + int(172800) });
}
denseEvents.sort((a, b) => a.timeSeconds - b.timeSeconds);
for (let i = 0; i < denseEvents.length; i += BATCH) await dense.apply(denseEvents.slice(i, i + BATCH));
const denseMs: number[] = [];
for (let i = 0; i < 1000; i++) {
  const start = D0 + int(3 * 86400);
  const window = { start, end: start + int(3 * 86400) };
  const s = performance.now();
  await dense.usage({ kind: "all" }, window, NOW);
  if (i >= 50) denseMs.push(performance.now() - s);
}
const denseStats = stats(denseMs);
console.log("dense worst case", JSON.stringify(denseStats));

// Through the service: NATS request/reply to the metrics service reading the same Redis.
const nats = await startNats({ jetstream: true, syncAlways: false });
const nc = await connectNats({ url: nats.url, name: "bench" });
const svcNc = await connectNats({ url: nats.url, name: "bench-metrics" });
const service = await startMetricsService({ nc: svcNc, redis: client, log: silentLogger, now: () => NOW * 1000 });
const identityOf = (scope: UsageScope): { identity: Identity; query: Record<string, string> } => {
  switch (scope.kind) {
    case "all":
      return { identity: { userId: "admin", tenant: "superadmin", role: "superadmin" }, query: {} };
    case "tenant":
      return { identity: { userId: "admin", tenant: scope.tenant, role: "admin" }, query: {} };
    case "tenantUser":
      return { identity: { userId: "admin", tenant: scope.tenant, role: "admin" }, query: { user: scope.user } };
    case "user":
      return { identity: { userId: "admin", tenant: "superadmin", role: "superadmin" }, query: { user: scope.user } };
  }
};
const serviceMs: number[] = [];
for (const [i, q] of queries.entries()) {
  const { identity, query } = identityOf(q.scope);
  if (q.window.start !== undefined) query["start"] = String(q.window.start);
  query["end"] = String(q.window.end);
  const s = performance.now();
  await callEndpoint(nc, "metrics.nodeUsage", { identity, params: {}, query });
  if (i >= 50) serviceMs.push(performance.now() - s);
}
await service.stop();
await nc.drain();
await svcNc.drain();
await nats.stop();
await client.close();
await redis.stop();

const results = {
  generatedAt: new Date().toISOString(),
  node: process.version,
  machine: `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB (benchmark, redis-server and nats-server share them)`,
  redis: "redis-server 7.0 on loopback, no persistence",
  data: {
    nodeLifetimes: nodes,
    clusters,
    openNodes,
    tenants: TENANTS,
    userNames: USER_NAMES,
    historyDays: HISTORY / 86400,
    eventsDelivered: swapped.length,
    eventsApplied: applied,
  },
  load: {
    seconds: round(loadSeconds),
    eventsPerSecond: Math.round(swapped.length / loadSeconds),
    batch: BATCH,
    inFlight: IN_FLIGHT,
    redisUsedMemoryBytes: Number(memory["used_memory"]),
    redisUsedMemory: memory["used_memory_human"],
    bytesPerLifetime: Math.round(Number(memory["used_memory"]) / nodes),
    keys,
  },
  queries: {
    count: QUERIES,
    targetMs: 50,
    store: stats(storeMs),
    storeByScope: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, { count: v.length, ...stats(v) }])),
    worstCase: {
      note: `${DENSE_NODES} more lifetimes created and deleted in every second of 2 days: query edges in full hashes`,
      ...denseStats,
    },
    throughService: { note: "NATS request/reply to the metrics service (no HTTP)", ...stats(serviceMs) },
    checkedAgainstDefinition: CHECKED,
    mismatches,
  },
};
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, JSON.stringify(results, null, 2) + "\n");
console.log(JSON.stringify(results.queries, null, 2));
if (mismatches > 0) process.exitCode = 1;
