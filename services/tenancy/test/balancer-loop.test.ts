/**
 * The balancer loop (balancer/balancer.ts) over its KV store (balancer/balancer-store.ts) on a real nats-server,
 * with an injected clock: several balancers on one assignment, provisioner death by the clock, record removal,
 * shortfall logging. Rounds are driven by `runNow` (the interval is set long), so nothing here sleeps.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { startNats, type NatsHandle } from "@corral/deploy";
import {
  ASSIGNMENT_KEY,
  PROVISIONER_DEAD_AFTER_MS,
  buckets,
  encode,
  kvKey,
  type ProvisionerRecord,
  type WorkerAssignment,
} from "@corral/contracts";
import {
  connectNats,
  createLogger,
  openBucket,
  readValue,
  silentLogger,
  type Logger,
} from "@corral/shared";
import { startBalancer, type Balancer } from "../src/balancer/balancer.js";
import { openBalancerStore, type BalancerStore } from "../src/balancer/balancer-store.js";
import { eventually } from "../../../test/helpers/eventually.js";

interface Context {
  nats: NatsHandle;
  /** The test's own connection, for writing records and tenants. */
  nc: NatsConnection;
  connections: NatsConnection[];
  clock: { now: number };
}
const test = anyTest as TestFn<Context>;
type T = ExecutionContext<Context>;

// A server per test: the buckets have fixed names, and each test wants them empty.
test.beforeEach(async (t) => {
  const nats = await startNats({ jetstream: true, syncAlways: false });
  t.context.nats = nats;
  t.context.connections = [];
  t.context.nc = await connect(t, "balancer-test");
  t.context.clock = { now: 10_000_000 };
});
test.afterEach.always(async (t) => {
  await Promise.all((t.context.connections ?? []).map((c) => c.drain().catch(() => {})));
  await t.context.nats?.stop();
});

async function connect(t: T, name: string): Promise<NatsConnection> {
  const nc = await connectNats({ url: t.context.nats.url, name });
  t.context.connections.push(nc);
  return nc;
}

/** A balancer instance with its own connection, as a tenancy process would run it. */
async function instance(t: T, log: Logger = silentLogger): Promise<{ balancer: Balancer; store: BalancerStore }> {
  const store = await openBalancerStore(await connect(t, "tenancy"), log);
  const balancer = startBalancer({ store, log, now: () => t.context.clock.now, intervalMs: 3_600_000 });
  t.teardown(async () => {
    await balancer.stop();
    store.stop();
  });
  return { balancer, store };
}

async function putProvisioner(t: T, id: string, capacityTotal: number, lastHeartbeat = t.context.clock.now) {
  const record: ProvisionerRecord = {
    id,
    host: `${id}.example.com`,
    port: 55056,
    capacityTotal,
    usage: {},
    lastHeartbeat,
    registeredAt: lastHeartbeat,
    plugins: { providertypes: [], automatortypes: [] },
  };
  const kv = await openBucket(t.context.nc, buckets.provisioners);
  return kv.put(kvKey(id), encode(record));
}

async function putTenant(t: T, name: string, workers: number) {
  const kv = await openBucket(t.context.nc, buckets.tenants);
  await kv.put(kvKey(name), encode({ tenant: { name, workers } }));
}

async function stored(t: T): Promise<{ value: WorkerAssignment; revision: number } | undefined> {
  return readValue<WorkerAssignment>(await openBucket(t.context.nc, buckets.assignments), ASSIGNMENT_KEY);
}

const heldBy = (a: WorkerAssignment, tenant: string) =>
  Object.values(a).reduce((sum, byTenant) => sum + (byTenant[tenant] ?? 0), 0);

test("balancer - instances agree on one assignment and stop writing once it holds", async (t) => {
  await putProvisioner(t, "p1", 3);
  await putProvisioner(t, "p2", 3);
  await putTenant(t, "acme", 4);
  await putTenant(t, "beta", 1);
  const instances = await Promise.all([instance(t), instance(t), instance(t)]);

  // Concurrent rounds: compare-and-set makes later writers recompute from what the first wrote.
  await Promise.all(instances.map((i) => i.balancer.runNow()));
  const first = await stored(t);
  // Round-robin, one per tenant per round; each to the provisioner with the fewest of the tenant, then the freest.
  t.deepEqual(first?.value, { p1: { acme: 2 }, p2: { acme: 2, beta: 1 } });

  const again = await Promise.all(instances.map((i) => i.balancer.runNow()));
  t.deepEqual(
    again.map((r) => r?.wrote),
    [false, false, false],
    "nobody rewrites a balanced assignment",
  );
  t.is((await stored(t))?.revision, first?.revision);
});

test("balancer - a change of workers is picked up from the tenants bucket watch, without a tick", async (t) => {
  await putProvisioner(t, "p1", 10);
  await instance(t);
  await instance(t);
  await putTenant(t, "acme", 2);
  await eventually(async () => heldBy((await stored(t))?.value ?? {}, "acme") === 2, { what: "acme placed" });
  await putTenant(t, "acme", 5);
  await eventually(async () => heldBy((await stored(t))?.value ?? {}, "acme") === 5, { what: "acme raised" });
  await putTenant(t, "acme", 0);
  await eventually(
    async () => {
      const a = await stored(t);
      return a !== undefined && Object.keys(a.value).length === 0;
    },
    { what: "acme gone from the assignment" },
  );
  t.pass();
});

test("balancer - a provisioner silent past PROVISIONER_DEAD_AFTER_MS loses its workers to the others", async (t) => {
  const { clock } = t.context;
  await putProvisioner(t, "p1", 4);
  await putProvisioner(t, "p2", 4);
  await putProvisioner(t, "p3", 4);
  await putTenant(t, "acme", 6);
  const a = await instance(t);
  const b = await instance(t);
  await a.balancer.runNow();
  const before = (await stored(t))!.value;
  t.deepEqual(before, { p1: { acme: 2 }, p2: { acme: 2 }, p3: { acme: 2 } });

  // p2 and p3 keep heartbeating; p1 stops.
  clock.now += PROVISIONER_DEAD_AFTER_MS - 1;
  await putProvisioner(t, "p2", 4);
  await putProvisioner(t, "p3", 4);
  t.is((await b.balancer.runNow())?.wrote, false, "p1 is not dead yet");
  clock.now += 1;
  const round = await b.balancer.runNow();
  t.true(round?.wrote);
  t.deepEqual((await stored(t))!.value, { p2: { acme: 3 }, p3: { acme: 3 } });
  t.deepEqual(round?.removed, [], "a dead record stays a while");

  // It heartbeats again: nothing moves back (minimal movement), but it takes new workers.
  await putProvisioner(t, "p1", 4);
  await putTenant(t, "acme", 8);
  await a.balancer.runNow();
  t.deepEqual((await stored(t))!.value, { p1: { acme: 2 }, p2: { acme: 3 }, p3: { acme: 3 } });
});

test("balancer - the record of a provisioner dead for removeDeadAfterMs is removed, unless it came back", async (t) => {
  const { clock } = t.context;
  const kv = await openBucket(t.context.nc, buckets.provisioners);
  await putProvisioner(t, "gone", 4, clock.now - 10 * PROVISIONER_DEAD_AFTER_MS);
  await putProvisioner(t, "recent", 4, clock.now - 2 * PROVISIONER_DEAD_AFTER_MS);
  const { balancer, store } = await instance(t);
  await balancer.runNow(); // the first round, at start, may already have removed it
  t.is(await kv.get(kvKey("gone")).then((e) => e?.operation), "PURGE");
  t.is(await kv.get(kvKey("recent")).then((e) => e?.operation), "PUT", "dead, but not for long enough");

  // A provisioner that heartbeats between the read and the removal keeps its record.
  const revision = await putProvisioner(t, "flaky", 4, clock.now - 20 * PROVISIONER_DEAD_AFTER_MS);
  await putProvisioner(t, "flaky", 4, clock.now);
  t.false(await store.removeProvisioner(kvKey("flaky"), revision));
  t.is(await kv.get(kvKey("flaky")).then((e) => e?.operation), "PUT");
});

test("balancer - a shortfall is logged once when it appears and once when it clears", async (t) => {
  const lines: Array<{ level: string; msg: string; shortfall?: unknown }> = [];
  const log = createLogger({}, { write: (line) => void lines.push(JSON.parse(line)) });
  await putProvisioner(t, "p1", 2);
  await putTenant(t, "acme", 3);
  await putTenant(t, "beta", 1);
  const { balancer } = await instance(t, log);
  const round = await balancer.runNow();
  await balancer.runNow();
  await balancer.runNow();
  t.deepEqual(round?.shortfall, { acme: 2 });
  t.deepEqual(
    lines.filter((l) => l.msg.startsWith("worker capacity short")).map((l) => [l.level, l.shortfall]),
    [["warn", { acme: 2 }]],
  );

  await putProvisioner(t, "p2", 2);
  await balancer.runNow();
  t.deepEqual((await stored(t))!.value, { p1: { acme: 1, beta: 1 }, p2: { acme: 2 } });
  t.is(lines.filter((l) => l.msg === "worker capacity shortfall resolved").length, 1);
});

test("balancer - with no provisioner every worker is short and no assignment is written", async (t) => {
  await putTenant(t, "acme", 3);
  const { balancer } = await instance(t);
  const round = await balancer.runNow();
  t.deepEqual(round?.shortfall, { acme: 3 });
  t.is(round?.wrote, false);
  t.is(await stored(t), undefined, "no assignment written while it would be empty");
});

test("balancer - options are checked", (t) => {
  const store = {} as BalancerStore;
  const base = { store, log: silentLogger, now: () => 0 };
  t.throws(() => startBalancer({ ...base, intervalMs: 0 }), { instanceOf: RangeError });
  t.throws(() => startBalancer({ ...base, removeDeadAfterMs: 10 }), { instanceOf: RangeError });
});
