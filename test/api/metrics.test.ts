/**
 * Metrics through the REST API (docs/api.md; services/metrics/README.md): every status of both
 * endpoints, queue counts against real task consumers, and node usage against hand-computed node-seconds from
 * node events written to the events stream with controlled times (out of order, duplicated).
 */
import { jetstream, type JsMsg } from "@nats-io/jetstream";
import { encode, eventSubject, streams, taskConsumerName, taskSubject } from "@corral/contracts";
import { ensureTaskConsumer } from "@corral/shared";
import { api, SUPERADMIN, type Caller } from "../helpers/api.js";
import { assertError, assertOk, show } from "../helpers/assertions.js";
import { createTenant } from "../helpers/catalog.js";
import { eventually } from "../helpers/eventually.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

/** The metrics service's clock: fixed, so open nodes and the default end are known exactly. */
const NOW = 1_800_000_000;
const test = testWithSystem({ metrics: 1, metricsNow: () => NOW * 1000 });
type T = SystemTest;

const get = (t: T, path: string, caller: Caller) => api(t.context.sys.baseUrl, "GET", path, caller);

test("metrics - both endpoints answer 401 without the identity headers", async (t) => {
  for (const path of ["/metrics/queues", "/metrics/nodes/usage", "/metrics/nodes/usage?start=1&end=2"]) {
    assertError(t, await get(t, path, {}), 401, `${path} without headers`);
    assertError(t, await get(t, path, { user: "admin" }), 401, `${path} without a tenant`);
    assertError(t, await get(t, path, { tenant: "superadmin" }), 401, `${path} without a user`);
  }
});

test("metrics - queues: 403 for an ordinary user; a tenant admin sees its tenant; the superadmin every tenant", async (t) => {
  const acme = await createTenant(t.context.sys.baseUrl, "q-acme");
  const beta = await createTenant(t.context.sys.baseUrl, "q-beta");
  assertError(t, await get(t, "/metrics/queues", acme.user), 403, "ordinary user");
  assertError(t, await get(t, "/metrics/queues", { user: "bob", tenant: "superadmin" }), 403, "ordinary user of superadmin");
  const own = await get(t, "/metrics/queues", acme.admin);
  assertOk(t, own, "tenant admin");
  t.deepEqual(own.body, { [acme.name]: { inProgress: 0, queued: 0, total: 0 } });
  const all = await get(t, "/metrics/queues", SUPERADMIN);
  assertOk(t, all, "superadmin");
  for (const name of ["superadmin", acme.name, beta.name]) {
    t.deepEqual(all.body[name], { inProgress: 0, queued: 0, total: 0 }, name);
  }
});

test("metrics - queues count queued tasks, then pulled but unacknowledged ones as in progress", async (t) => {
  const { sys } = t.context;
  const acme = await createTenant(sys.baseUrl, "q-tasks");
  const js = jetstream(sys.nc);
  const queues = async (caller: Caller) => {
    const res = await get(t, "/metrics/queues", caller);
    if (res.status !== 200) throw new Error(show(res));
    return res.body[acme.name];
  };
  for (let i = 0; i < 5; i++) await js.publish(taskSubject(acme.name), encode({ tenant: acme.name, taskId: `task-${i}` }));
  // Before any worker made the tenant's consumer, published tasks wait in the stream: queued.
  t.deepEqual(await queues(acme.admin), { inProgress: 0, queued: 5, total: 5 });
  await ensureTaskConsumer(sys.nc, acme.name);
  t.deepEqual(await queues(acme.admin), { inProgress: 0, queued: 5, total: 5 });
  const consumer = await js.consumers.get(streams.tasks, taskConsumerName(acme.name));
  const pulled: JsMsg[] = [];
  for await (const m of await consumer.fetch({ max_messages: 2, expires: 2000 })) pulled.push(m);
  t.is(pulled.length, 2);
  t.deepEqual(await queues(acme.admin), { inProgress: 2, queued: 3, total: 5 });
  t.deepEqual(await queues(SUPERADMIN), { inProgress: 2, queued: 3, total: 5 }, "the superadmin sees the same");
  await pulled[0]!.ackAck();
  t.deepEqual(await queues(acme.admin), { inProgress: 1, queued: 3, total: 4 });
});

test("metrics - node usage refuses: 405 for a tenant parameter from a non-superadmin, 403 for another user's usage, 400 for bad times", async (t) => {
  const acme = await createTenant(t.context.sys.baseUrl, "u-refuse");
  const usage = "/metrics/nodes/usage";
  const foreign = await get(t, `${usage}?tenant=other`, acme.admin);
  assertError(t, foreign, 405, "admin, foreign tenant");
  t.is(foreign.headers.get("allow"), "", "a 405 carries Allow (empty: no method reads it for this caller)");
  assertError(t, await get(t, `${usage}?tenant=${acme.name}`, acme.admin), 405, "admin, own tenant");
  assertError(t, await get(t, `${usage}?tenant=${acme.name}`, acme.user), 405, "user, own tenant");
  assertError(t, await get(t, `${usage}?tenant=${acme.name}`, { user: "bob", tenant: "superadmin" }), 405, "ordinary user of superadmin");
  assertError(t, await get(t, `${usage}?user=carol`, acme.user), 403, "user asking for another user");
  for (const [query, what] of [
    ["start=abc", "non-numeric start"],
    ["end=1.5", "fractional end"],
    ["start=-3", "negative start"],
    ["start=10&end=9", "end before start"],
    [`start=${NOW + 10}`, "start after now (the default end)"],
    ["start=", "empty start"],
    ["user=", "empty user"],
  ] as const) {
    assertError(t, await get(t, `${usage}?${query}`, acme.admin), 400, what);
  }
  const own = await get(t, `${usage}?user=${acme.user.user}`, acme.user);
  assertOk(t, own, "a user asking for itself");
});

test("metrics - node usage equals hand-computed node-seconds for events written out of order, twice, singly and in batches", async (t) => {
  const { sys } = t.context;
  const acme = await createTenant(sys.baseUrl, "u-acme");
  const beta = await createTenant(sys.baseUrl, "u-beta");
  const js = jetstream(sys.nc);
  const T0 = NOW - 10_000;
  type Kind = "node.created" | "node.deleted";
  const event = (type: Kind, tenant: string, clusterId: string, nodeId: string, ownerId: string, seconds: number) => ({
    type,
    tenant,
    clusterId,
    nodeId,
    ownerId,
    time: seconds * 1000 + 999,
  });
  // One message per event, as the stream's older history holds them.
  const send = async (...args: Parameters<typeof event>) => {
    await js.publish(eventSubject(args[1], args[0]), encode(event(...args)));
  };
  // One message per results batch, as the clusters service publishes them now.
  const sendBatch = async (tenant: string, events: Array<ReturnType<typeof event>>) => {
    await js.publish(eventSubject(tenant, "node.changes"), encode({ type: "node.changes", tenant, events }));
  };
  // acme/bob: n1 [T0, T0+1000]; acme/bob: n2 [T0+500, open]; acme/carol: n3 [T0+2000, T0+2600]
  // beta/bob: n4 [T0+100, T0+400]
  await send("node.deleted", acme.name, "c1", "n1", "bob", T0 + 1000); // before its creation
  await send("node.created", acme.name, "c1", "n1", "bob", T0);
  await sendBatch(acme.name, [event("node.created", acme.name, "c1", "n2", "bob", T0 + 500)]);
  await send("node.created", acme.name, "c1", "n2", "bob", T0 + 500); // duplicate
  await send("node.created", acme.name, "c2", "n3", "carol", T0 + 2000);
  await send("node.deleted", acme.name, "c2", "n3", "carol", T0 + 2600);
  await send("node.deleted", acme.name, "c2", "n3", "carol", T0 + 9000); // a second deletion is ignored
  await sendBatch(beta.name, [event("node.created", beta.name, "c1", "n4", "bob", T0 + 100), event("node.deleted", beta.name, "c1", "n4", "bob", T0 + 400)]);

  const n1 = 1000;
  const n2 = NOW - (T0 + 500);
  const n3 = 600;
  const n4 = 300;
  const usage = async (caller: Caller, query = "") => {
    const res = await get(t, `/metrics/nodes/usage${query}`, caller);
    if (res.status !== 200) throw new Error(show(res));
    return res.body as { start: number; end: number; data: Array<{ time: number; value: number }> };
  };
  // Wait until the feed has recorded everything.
  await eventually(async () => (await usage(acme.admin)).data[0]?.value === n1 + n2 + n3, { what: "acme's events recorded", timeoutMs: 15_000 });
  await eventually(async () => (await usage(SUPERADMIN, `?tenant=${beta.name}`)).data[0]?.value === n4, { what: "beta's events recorded" });

  // Defaults: start = the scope's first creation, end = now; time = start.
  t.deepEqual(await usage(acme.admin), { start: T0, end: NOW, data: [{ time: T0, value: n1 + n2 + n3 }] });
  t.deepEqual(await usage(SUPERADMIN), { start: T0, end: NOW, data: [{ time: T0, value: n1 + n2 + n3 + n4 }] });
  t.deepEqual(await usage(SUPERADMIN, `?tenant=${beta.name}`), { start: T0 + 100, end: NOW, data: [{ time: T0 + 100, value: n4 }] });
  // user: within the caller's tenant for a tenant admin; across tenants for the superadmin
  t.is((await usage(acme.admin, "?user=bob")).data[0]?.value, n1 + n2);
  t.is((await usage(acme.admin, "?user=carol")).data[0]?.value, n3);
  t.is((await usage(beta.admin, "?user=bob")).data[0]?.value, n4);
  t.is((await usage(SUPERADMIN, "?user=bob")).data[0]?.value, n1 + n2 + n4);
  t.is((await usage(SUPERADMIN, `?tenant=${acme.name}&user=bob`)).data[0]?.value, n1 + n2);
  // an ordinary user sees its own usage
  t.is((await usage({ user: "bob", tenant: acme.name })).data[0]?.value, n1 + n2);
  t.is((await usage({ user: "carol", tenant: acme.name }, "?user=carol")).data[0]?.value, n3);
  t.deepEqual(await usage({ user: "nobody", tenant: acme.name }), { start: 0, end: NOW, data: [{ time: 0, value: 0 }] });
  // windows: [T0+600, T0+2300] holds n1 400 + n2 1700 + n3 300
  t.deepEqual(await usage(acme.admin, `?start=${T0 + 600}&end=${T0 + 2300}`), {
    start: T0 + 600,
    end: T0 + 2300,
    data: [{ time: T0 + 600, value: 400 + 1700 + 300 }],
  });
  t.is((await usage(acme.admin, `?start=${T0 - 5000}&end=${T0}`)).data[0]?.value, 0);
  // an end after now: the open node stops at now
  t.is((await usage(acme.admin, `?start=${NOW - 10}&end=${NOW + 5000}`)).data[0]?.value, 10);
  // end given, start absent: start is the first creation
  t.deepEqual(await usage(acme.admin, `?end=${T0 + 100}`), { start: T0, end: T0 + 100, data: [{ time: T0, value: 100 }] });
});

test("metrics - the package exports only startMetricsService", async (t) => {
  t.deepEqual(Object.keys(await import("@corral/metrics")).sort(), ["startMetricsService"]);
});
