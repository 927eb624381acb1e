/**
 * The Redis usage store against a real redis-server: hand-computed node-seconds, idempotence, out-of-order
 * events, and a property test against the obvious definition (usage-oracle.ts) across page, block and era edges.
 */
import anyTest, { type TestFn } from "ava";
import fc from "fast-check";
import { createClient } from "redis";
import { createRedisUsageStore, type NodeEvent, type RedisClient, type UsageScope, type UsageStore } from "@corral/metrics/testing";
import { startRedis, type ServerHandle } from "../../../test/helpers/servers.js";
import { oracleUsage, replay } from "./usage-oracle.js";

const test = anyTest as TestFn<{ redis: ServerHandle; client: RedisClient }>;
test.before(async (t) => {
  t.context.redis = await startRedis();
  t.context.client = createClient({ url: t.context.redis.url }) as RedisClient;
  await t.context.client.connect();
});
test.after.always(async (t) => {
  await t.context.client?.close();
  await t.context.redis?.stop();
});

let stores = 0;
const freshStore = (t: { context: { client: RedisClient } }, batchSize?: number): UsageStore =>
  createRedisUsageStore(t.context.client, { keyPrefix: `test${++stores}:`, ...(batchSize ? { batchSize } : {}) });

const T0 = 1_700_000_000;
const ev = (kind: NodeEvent["kind"], nodeId: string, timeSeconds: number, extra: Partial<NodeEvent> = {}): NodeEvent => ({
  kind,
  tenant: "acme",
  clusterId: "00000001",
  nodeId,
  ownerId: "bob",
  timeSeconds,
  ...extra,
});
const ALL: UsageScope = { kind: "all" };

test("usage store - node-seconds of closed and open nodes over windows, computed by hand", async (t) => {
  const store = freshStore(t);
  // n1 lives [T0, T0+100], n2 [T0+50, T0+250], n3 [T0+200, now)
  t.is(await store.apply([ev("created", "n1", T0), ev("created", "n2", T0 + 50), ev("deleted", "n1", T0 + 100)]), 3);
  t.is(await store.apply([ev("deleted", "n2", T0 + 250), ev("created", "n3", T0 + 200)]), 2);
  const now = T0 + 1000;
  const at = (start: number | undefined, end: number) => store.usage(ALL, { start, end }, now);
  t.deepEqual(await at(T0, T0 + 100), { start: T0, end: T0 + 100, value: 100 + 50 });
  t.deepEqual(await at(T0 + 60, T0 + 220), { start: T0 + 60, end: T0 + 220, value: 40 + 160 + 20 });
  t.deepEqual(await at(T0, now), { start: T0, end: now, value: 100 + 200 + 800 });
  // start absent: the first creation; end after now: open nodes stop at now
  t.deepEqual(await at(undefined, now + 5000), { start: T0, end: now + 5000, value: 1100 });
  t.deepEqual(await at(T0 - 500, T0), { start: T0 - 500, end: T0, value: 0 });
  t.deepEqual(await at(T0 + 30, T0 + 30), { start: T0 + 30, end: T0 + 30, value: 0 });
  // a window entirely after now holds no usage yet
  t.deepEqual(await at(now + 10, now + 20), { start: now + 10, end: now + 20, value: 0 });
});

test("usage store - scopes: all, tenant, tenant and user, user across tenants", async (t) => {
  const store = freshStore(t);
  await store.apply([
    ev("created", "a1", T0, { tenant: "acme", ownerId: "bob" }),
    ev("deleted", "a1", T0 + 10, { tenant: "acme", ownerId: "bob" }),
    ev("created", "a2", T0, { tenant: "acme", ownerId: "carol" }),
    ev("deleted", "a2", T0 + 20, { tenant: "acme", ownerId: "carol" }),
    ev("created", "b1", T0, { tenant: "beta", ownerId: "bob", clusterId: "00000009" }),
    ev("deleted", "b1", T0 + 40, { tenant: "beta", ownerId: "bob", clusterId: "00000009" }),
  ]);
  const value = async (scope: UsageScope) => (await store.usage(scope, { start: T0, end: T0 + 100 }, T0 + 100)).value;
  t.is(await value(ALL), 70);
  t.is(await value({ kind: "tenant", tenant: "acme" }), 30);
  t.is(await value({ kind: "tenant", tenant: "beta" }), 40);
  t.is(await value({ kind: "tenantUser", tenant: "acme", user: "bob" }), 10);
  t.is(await value({ kind: "tenantUser", tenant: "beta", user: "bob" }), 40);
  t.is(await value({ kind: "user", user: "bob" }), 50);
  t.is(await value({ kind: "user", user: "carol" }), 20);
  t.is(await value({ kind: "tenant", tenant: "nobody" }), 0);
  t.deepEqual(await store.usage({ kind: "user", user: "nobody" }, { end: T0 + 100 }, T0 + 100), { start: 0, end: T0 + 100, value: 0 });
});

test("usage store - duplicates change nothing; a deletion before its creation is kept until the creation comes", async (t) => {
  const store = freshStore(t);
  t.is(await store.apply([ev("deleted", "n1", T0 + 100)]), 1);
  t.is((await store.usage(ALL, { start: T0, end: T0 + 200 }, T0 + 200)).value, 0, "a node without its creation does not count");
  t.is(await store.apply([ev("created", "n1", T0), ev("created", "n1", T0 - 50), ev("deleted", "n1", T0 + 900)]), 1);
  t.is(await store.apply([ev("created", "n1", T0), ev("deleted", "n1", T0 + 100)]), 0);
  t.is((await store.usage(ALL, { start: T0 - 1000, end: T0 + 1000 }, T0 + 1000)).value, 100);
  // a deletion stamped before its creation (clocks) makes a zero-length life
  await store.apply([ev("deleted", "n2", T0 + 5), ev("created", "n2", T0 + 10)]);
  t.is((await store.usage(ALL, { start: T0 - 1000, end: T0 + 1000 }, T0 + 1000)).value, 100);
});

test("usage store - an event far in the past updates every later figure (out of order)", async (t) => {
  const store = freshStore(t);
  const late = T0 + 30 * 86400;
  await store.apply([ev("created", "n2", late), ev("deleted", "n2", late + 3600)]);
  const now = late + 86400;
  t.is((await store.usage(ALL, { end: now }, now)).value, 3600);
  // a node created 30 days earlier and still open arrives afterwards
  await store.apply([ev("created", "n1", T0)]);
  t.deepEqual(await store.usage(ALL, { end: now }, now), { start: T0, end: now, value: 3600 + (now - T0) });
  t.is((await store.usage(ALL, { start: late, end: late + 10 }, now)).value, 20);
});

// Times around page (2^10), block (2^16) and era (2^22) edges, and anywhere within a few eras.
const ERA = 4_194_304;
const E0 = Math.ceil(T0 / ERA) * ERA;
const edges = [E0, E0 - 1, E0 + 1, E0 + 1024, E0 + 1023, E0 + 65536, E0 + 65535, E0 + 65537, E0 + ERA, E0 - ERA, E0 + 3 * 1024];
const time = fc.oneof(fc.constantFrom(...edges), fc.integer({ min: E0 - 2 * ERA, max: E0 + 2 * ERA }), fc.integer({ min: E0 - 3000, max: E0 + 3000 }));
const event = fc.record({
  kind: fc.constantFrom<NodeEvent["kind"]>("created", "deleted"),
  tenant: fc.constantFrom("acme", "beta", "a.b_c"),
  clusterId: fc.constantFrom("00000001", "00000002"),
  nodeId: fc.constantFrom("n1", "n2", "n3", "n4", "n5", "n6"),
  ownerId: fc.constantFrom("bob", "carol", "x_y.z"),
  timeSeconds: time,
});
const scope = fc.oneof(
  fc.constant<UsageScope>({ kind: "all" }),
  fc.constantFrom("acme", "beta", "a.b_c").map((tenant): UsageScope => ({ kind: "tenant", tenant })),
  fc.constantFrom("bob", "carol", "x_y.z").map((user): UsageScope => ({ kind: "user", user })),
  fc
    .tuple(fc.constantFrom("acme", "beta"), fc.constantFrom("bob", "carol", "x_y.z"))
    .map(([tenant, user]): UsageScope => ({ kind: "tenantUser", tenant, user })),
);

test("usage store - equals the definition for any events, order, batching, scope and window", async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(event, { maxLength: 60 }),
      fc.integer({ min: 1, max: 7 }),
      fc.array(fc.tuple(scope, fc.option(time, { nil: undefined }), time), { minLength: 1, maxLength: 8 }),
      time,
      async (events, batchSize, queries, now) => {
        const store = freshStore(t, batchSize);
        await store.apply(events);
        const nodes = replay(events);
        for (const [s, a, b] of queries) {
          const window = a === undefined ? { end: b } : { start: Math.min(a, b), end: Math.max(a, b) };
          const got = await store.usage(s, window, now);
          const want = oracleUsage(nodes.values(), s, window, now);
          if (got.value !== want.value || got.start !== want.start || got.end !== want.end) {
            t.log({ scope: s, window, now, got, want });
            return false;
          }
        }
        return true;
      },
    ),
    { numRuns: 150 },
  );
  t.pass();
});
