/**
 * Live events end to end: clusters created on the `sim` provider while clients follow them through the gateway's
 * Server-Sent Events route and WebSocket. Order and content of what a create shows, resuming without gaps or
 * repeats, who sees what (own clusters, the tenant for its admin, never another tenant), a failed task's output,
 * and the limits (a client that does not read is closed with a message; past the connection cap, 503).
 */
import { jetstream } from "@nats-io/jetstream";
import { clusterEventSubject, encode, type ClusterStreamEvent, type TaskEndedEvent } from "@corral/contracts";
import { connectNats, silentLogger } from "@corral/shared";
import { startGateway, type Gateway } from "@corral/gateway";
import { api } from "../helpers/api.js";
import { createCluster, latestPlan, tenantWithSimCatalog, waitForStatus, type E2eTenant, type SimCatalogOptions } from "../helpers/clusters.js";
import { fixtureTemplate } from "../helpers/fixture-catalog.js";
import { openEventSocket, openSse, opened, type SseClient } from "../helpers/event-clients.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 1, provisioners: 2, reconcileIntervalMs: 500 });
type T = SystemTest;

const webapp = (name: string) => ({ name, clusterTemplate: "webapp", numMachines: 2 });

const tenantOf = (t: T, prefix: string, catalog: SimCatalogOptions = {}): Promise<E2eTenant> =>
  tenantWithSimCatalog(t.context.sys, prefix, { workers: 3, catalog });

/** webapp whose lease can be extended: 1 h at first, 1 h per step, 3 h at most. */
const leasedWebapp = { ...fixtureTemplate("webapp"), name: "webapp-leased", administration: { leaseduration: { initial: "1h", max: "3h", step: "1h" } } };

const settledStatus = (e: ClusterStreamEvent) => e.type === "cluster.status" && e.status !== "pending";
const hasSettled = (c: SseClient) => c.events().some((e) => settledStatus(e.event));

/** A gateway of its own beside the system's, with other event stream limits. */
async function extraGateway(t: T, events: Parameters<typeof startGateway>[0]["events"]): Promise<{ gateway: Gateway; baseUrl: string }> {
  const nc = await connectNats({ url: t.context.sys.nats.url, name: "events-test-gateway" });
  const gateway = await startGateway({ nc, log: silentLogger, host: "127.0.0.1", port: 0, ...(events ? { events } : {}) });
  t.teardown(async () => {
    await gateway.stop();
    await nc.close();
  });
  return { gateway, baseUrl: `http://127.0.0.1:${gateway.port}/v2` };
}

test("SSE of a cluster create shows its status, each stage and every task's end up to active, in order; no task.started without a retry", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantOf(t, "evorder");
  const id = await createCluster(baseUrl, tenant.user, webapp("ev1"));
  const sse = await openSse(baseUrl, tenant.user, id);
  t.is(sse.status, 200);
  await sse.waitFor(() => hasSettled(sse), "the cluster settled");
  sse.close();
  const events = sse.events();
  const ids = events.map((e) => e.id);
  t.deepEqual(ids, [...ids].sort((a, b) => a - b), "ids (stream sequences) never decrease");
  const identities = events.map((e) => `${e.id} ${e.event.type} ${"taskId" in e.event ? e.event.taskId : ""}`);
  t.is(new Set(identities).size, identities.length, "no event twice (task ends stored inside a plan.progress share its id)");
  t.true(
    events.some((e, i) => e.event.type === "task.ended" && events[i + 1]?.id === e.id),
    "successful task ends come grouped with the progress that records them",
  );
  t.true(events.every((e) => e.event.clusterId === id && e.event.tenant === tenant.name));

  const kinds = events.map((e) => e.event);
  t.like(kinds[0], { type: "cluster.status", status: "pending", action: "cluster_create" });
  t.like(kinds.at(-1), { type: "cluster.status", status: "active", previous: "pending" });
  const finishedAt = kinds.findIndex((e) => e.type === "plan.finished");
  t.like(kinds[finishedAt], { type: "plan.finished", outcome: "succeeded" });
  t.is(finishedAt, kinds.length - 2, "the plan finishes right before the cluster turns active");

  // Stages start in order, each before any of its tasks ends, and after every task of the stage before ended.
  // A stage's `plan.stage` announces its tasks' first dispatch: no task of a plan without failures has a `task.started`.
  const plan = await latestPlan(baseUrl, tenant.user, id);
  const stageOfTask = new Map(plan.stages.flatMap((stage, i) => stage.map((task) => [task.id, i] as const)));
  const stageEvents = kinds.flatMap((e, at) => (e.type === "plan.stage" ? [{ at, stage: e.stage, tasks: e.tasks }] : []));
  t.deepEqual(stageEvents.map((s) => s.stage), plan.stages.map((_, i) => i));
  t.deepEqual(stageEvents.map((s) => s.tasks), plan.stages.map((s) => s.length));
  t.deepEqual(kinds.filter((e) => e.type === "task.started"), [], "no task.started: every task ran at its first attempt");
  const ended = new Map<string, TaskEndedEvent>();
  kinds.forEach((e, at) => {
    if (e.type !== "task.ended") return;
    const stage = stageOfTask.get(e.taskId);
    t.not(stage, undefined, `${e.taskId} is a task of the plan`);
    t.true(at > stageEvents[stage!]!.at, `${e.taskId} ends after its stage started`);
    const next = stageEvents[stage! + 1];
    if (next) t.true(at < next.at, `${e.taskId} ends before the next stage`);
    ended.set(e.taskId, e);
  });
  t.deepEqual([...ended.keys()].sort(), [...stageOfTask.keys()].sort(), "every task of the plan ended");
  for (const task of plan.stages.flat()) {
    const e = ended.get(task.id)!;
    t.like(e, { ok: true, status: 0, attempt: 1, nodeId: task.nodeId, service: task.service ?? "", taskName: task.taskName });
    t.true(e.durationMs >= 0 && e.resultAt >= e.startTime, `${task.id} carries its times`);
  }
  const progress = kinds.flatMap((e) => (e.type === "plan.progress" ? [e.stepscompleted] : []));
  t.deepEqual(progress, [...progress].sort((a, b) => a - b), "progress only grows");
  t.is(progress.at(-1), stageOfTask.size);
});

test("SSE resumed with Last-Event-ID misses nothing and repeats nothing; a bad Last-Event-ID is a 400", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantOf(t, "evresume");
  const id = await createCluster(baseUrl, tenant.user, webapp("ev2"));
  const first = await openSse(baseUrl, tenant.user, id);
  await first.waitFor((m) => m.length >= 6, "six events");
  first.close();
  // As a browser resumes: from the last id received. Frames after it (task ends whose group was cut off) come again.
  const lastEventId = first.lastEventId!;
  const seen = first.events().filter((e) => e.id !== -1 && e.id <= lastEventId);
  const resumed = await openSse(baseUrl, tenant.user, id, { lastEventId });
  await resumed.waitFor(() => hasSettled(resumed), "the cluster settled");
  resumed.close();
  const whole = await openSse(baseUrl, tenant.user, id);
  await whole.waitFor(() => hasSettled(whole), "the full history");
  whole.close();
  t.deepEqual(
    [...seen, ...resumed.events()].map((e) => e.id),
    whole.events().map((e) => e.id),
    "the first connection and the resumed one together are the whole stream, once each",
  );
  t.deepEqual([...seen, ...resumed.events()].map((e) => e.event), whole.events().map((e) => e.event));

  // The same resumed from the events stream itself, by a gateway that keeps no recent events in memory.
  const { baseUrl: streamOnly } = await extraGateway(t, { maxRecentEvents: 0, heartbeatMs: 100 });
  const fromStream = await openSse(streamOnly, tenant.user, id, { lastEventId });
  await fromStream.waitFor(() => hasSettled(fromStream), "the cluster settled, read from the stream");
  t.deepEqual(fromStream.events(), resumed.events());
  // A quiet stream still carries heartbeat comments (the first comment opens the stream).
  await fromStream.waitFor(() => fromStream.comments >= 4, "three heartbeats");
  fromStream.close();

  const bad = await openSse(baseUrl, tenant.user, id, { lastEventId: "abc" as unknown as number });
  t.is(bad.status, 400);
  t.like(bad.body, { status: 400, error: "bad_request" });
  t.regex((bad.body as { message: string }).message, /Last-Event-ID/);

  const post = await api(baseUrl, "POST", `/clusters/${id}/events`, tenant.user);
  t.is(post.status, 405);
  t.is(post.headers.get("allow"), "GET");
  t.like(post.body, { error: "method_not_allowed" });
  const notUpgraded = await api(baseUrl, "GET", "/events", tenant.user);
  t.is(notUpgraded.status, 426);
  t.regex((notUpgraded.body as { message: string }).message, /WebSocket/);
});

test("a failed task's end carries its output tail; the plan's end says what failed", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantOf(t, "evfail", { scripts: { postgresql: { install: { script: "echo postgresql-install-broke-here >&2; false" } } } });
  const id = await createCluster(baseUrl, tenant.user, webapp("ev3"));
  const sse = await openSse(baseUrl, tenant.user, id);
  await sse.waitFor(() => hasSettled(sse), "the cluster settled");
  sse.close();
  const events = sse.events().map((e) => e.event);
  const failures = events.filter((e): e is TaskEndedEvent => e.type === "task.ended" && !e.ok);
  if (failures.length === 0) t.log(JSON.stringify(events.filter((e) => e.type !== "task.started" && e.type !== "plan.progress")));
  t.true(failures.length >= 1, "a task.ended with ok false");
  for (const f of failures) {
    t.like(f, { service: "postgresql", taskName: "INSTALL" });
    t.not(f.status, 0);
    t.regex(f.output?.stderr ?? "", /postgresql-install-broke-here/);
  }
  t.deepEqual(failures.map((f) => f.attempt), failures.map((_, i) => i + 1), "each retry is the next attempt");
  const retries = events.flatMap((e) => (e.type === "task.started" ? [e.attempt] : []));
  t.deepEqual(retries, failures.slice(1).map((f) => f.attempt), "a task.started for each retry, none for the first attempt");
  t.like(events.find((e) => e.type === "plan.finished"), { outcome: "failed", failure: { taskName: "INSTALL" } });
  t.like(events.at(-1), { type: "cluster.status", status: "incomplete" });
});

test("a task that fails once is retried: the retry has a task.started with attempt 2, between the two ends; the first attempt none", async (t) => {
  const { baseUrl } = t.context.sys;
  // The node's working directory keeps a marker between attempts.
  const flakyInstall = { script: 'test -f .ok-postgresql-install || { touch .ok-postgresql-install; echo "first attempt fails" >&2; exit 1; }' };
  const tenant = await tenantOf(t, "evretry", { scripts: { postgresql: { install: flakyInstall } } });
  const id = await createCluster(baseUrl, tenant.user, webapp("ev8"));
  const sse = await openSse(baseUrl, tenant.user, id);
  await sse.waitFor(() => hasSettled(sse), "the cluster settled");
  sse.close();
  const events = sse.events().map((e) => e.event);
  t.like(events.at(-1), { type: "cluster.status", status: "active" });
  const started = events.flatMap((e, at) => (e.type === "task.started" ? [{ at, e }] : []));
  t.deepEqual(started.map(({ e }) => [e.taskName, e.service, e.attempt]), [["INSTALL", "postgresql", 2]], "one task.started: the retry's");
  const retry = started[0]!;
  const ends = events.flatMap((e, at) => (e.type === "task.ended" && e.taskId === retry.e.taskId ? [{ at, e }] : []));
  t.deepEqual(ends.map(({ e }) => [e.attempt, e.ok]), [[1, false], [2, true]]);
  t.true(ends[0]!.at < retry.at && retry.at < ends[1]!.at, "the retry starts after the first attempt ended and before it ends");
});

test("WebSocket: a user follows its own cluster, the admin the whole tenant; a user may not follow the tenant", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantOf(t, "evws", { extraTemplates: [leasedWebapp] });
  const userSocket = opened(await openEventSocket(baseUrl, tenant.user));
  const adminSocket = opened(await openEventSocket(baseUrl, tenant.admin));
  adminSocket.send({ type: "subscribe", tenant: true });
  await adminSocket.waitFor((m) => m.some((x) => x.type === "subscribed"), "admin subscribed");
  userSocket.send({ type: "subscribe", tenant: true });
  await userSocket.waitFor((m) => m.some((x) => x.type === "error"), "the refusal");
  t.like(userSocket.messages[0], { type: "error", status: 403, error: "forbidden" });
  t.regex((userSocket.messages[0] as { message: string }).message, /admin/);

  const mine = await createCluster(baseUrl, tenant.user, { ...webapp("ev4"), clusterTemplate: "webapp-leased" });
  const bobs = await createCluster(baseUrl, tenant.other, webapp("ev5"));
  userSocket.send({ type: "subscribe", clusterId: mine });
  userSocket.send({ type: "subscribe", clusterId: bobs });
  await waitForStatus(baseUrl, tenant.user, mine, "active");
  await waitForStatus(baseUrl, tenant.other, bobs, "active");
  const settled = (m: typeof userSocket.messages, id: string) =>
    m.some((x) => x.type === "event" && x.event.clusterId === id && settledStatus(x.event));
  await userSocket.waitFor((m) => settled(m, mine), "the user's cluster settled");
  await adminSocket.waitFor((m) => settled(m, mine) && settled(m, bobs), "both clusters settled for the admin");

  t.true(
    userSocket.messages.some((m) => m.type === "error" && m.status === 404 && m.subscription === `cluster:${bobs}`),
    "another user's cluster is a 404",
  );
  const userEvents = userSocket.messages.flatMap((m) => (m.type === "event" ? [m] : []));
  t.true(userEvents.every((m) => m.event.clusterId === mine && m.subscription === `cluster:${mine}`));
  t.like(userEvents[0]?.event, { type: "cluster.status", status: "pending" }, "a cluster subscription replays from the start");
  const adminEvents = adminSocket.messages.flatMap((m) => (m.type === "event" ? [m] : []));
  const adminIds = adminEvents.map((m) => m.id);
  t.deepEqual(adminIds, [...adminIds].sort((a, b) => a - b));
  t.deepEqual(
    adminEvents.filter((m) => m.event.clusterId === mine).map((m) => m.id),
    userEvents.map((m) => m.id),
    "the admin saw the same events of the user's cluster",
  );

  // Later changes arrive live: a lease extension, and a second job's statuses.
  const before = await api(baseUrl, "GET", `/clusters/${mine}`, tenant.user);
  const expireTime = (before.body as { createTime: number }).createTime + 5_400_000;
  t.is((await api(baseUrl, "POST", `/clusters/${mine}`, { ...tenant.user, body: { expireTime } })).status, 200);
  await userSocket.waitFor((m) => m.some((x) => x.type === "event" && x.event.type === "lease.changed"), "the lease change");
  t.like(userSocket.messages.find((x) => x.type === "event" && x.event.type === "lease.changed"), {
    event: { expireTime, previousExpireTime: (before.body as { expireTime: number }).expireTime },
  });
  t.is((await api(baseUrl, "POST", `/clusters/${mine}/services/restart`, tenant.user)).status, 200);
  const statuses = () =>
    userSocket.messages.flatMap((x) => (x.type === "event" && x.event.type === "cluster.status" ? [x.event] : []));
  await userSocket.waitFor(() => statuses().length >= 4, "the restart's statuses");
  t.like(statuses()[2], { status: "pending", previous: "active", action: "restart_services" });
  t.like(statuses()[3], { status: "active", previous: "pending", action: "restart_services" });

  // Resuming a subscription after an id.
  const allIds = userSocket.messages.flatMap((m) => (m.type === "event" ? [m.id] : []));
  const resumeAfter = allIds[4]!;
  const later = opened(await openEventSocket(baseUrl, tenant.user));
  later.send({ type: "subscribe", clusterId: mine, since: resumeAfter });
  await later.waitFor((m) => m.some((x) => x.type === "event" && x.id === allIds.at(-1)), "the resumed subscription reached the end");
  t.deepEqual(
    later.messages.flatMap((m) => (m.type === "event" ? [m.id] : [])),
    allIds.filter((id) => id > resumeAfter),
  );

  later.send({ type: "subscribe", clusterId: mine });
  later.sendRaw("not json");
  later.send({ type: "subscribe", clusterId: mine, tenant: true });
  await later.waitFor((m) => m.filter((x) => x.type === "error").length >= 3, "three refusals");
  const errors = later.messages.filter((m) => m.type === "error").map((m) => (m as { message: string; status: number }));
  t.true(errors.every((e) => e.status === 400));
  t.regex(errors.map((e) => e.message).join("\n"), /already subscribed[\s\S]*must be JSON[\s\S]*either clusterId or tenant/);
  for (const s of [userSocket, adminSocket, later]) s.close();
});

test("another tenant sees nothing: 404 for a foreign cluster id, nothing on its tenant subscription", async (t) => {
  const { baseUrl } = t.context.sys;
  const a = await tenantOf(t, "evtena");
  const b = await tenantOf(t, "evtenb");
  const spy = opened(await openEventSocket(baseUrl, b.admin));
  spy.send({ type: "subscribe", tenant: true });
  await spy.waitFor((m) => m.some((x) => x.type === "subscribed"), "subscribed");
  const id = await createCluster(baseUrl, a.user, webapp("ev6"));
  spy.send({ type: "subscribe", clusterId: id });
  const foreign = await openSse(baseUrl, b.admin, id);
  t.is(foreign.status, 404);
  t.like(foreign.body, { status: 404, error: "not_found" });
  const own = await openSse(baseUrl, a.admin, id);
  await own.waitFor(() => hasSettled(own), "tenant A's admin saw it settle");
  own.close();
  await spy.waitFor((m) => m.some((x) => x.type === "error"), "the refusal");
  t.like(spy.messages.find((m) => m.type === "error"), { status: 404, subscription: `cluster:${id}` });
  t.false(spy.messages.some((m) => m.type === "event"), "no event of tenant A reached tenant B");
  spy.close();
});

test("a client that stops reading is closed with a message saying so; the gateway answers 503 past its connection cap", async (t) => {
  const { sys } = t.context;
  const tenant = await tenantOf(t, "evslow");
  const id = await createCluster(sys.baseUrl, tenant.user, webapp("ev7"));
  await waitForStatus(sys.baseUrl, tenant.user, id, "active");
  const { baseUrl } = await extraGateway(t, { maxBufferedBytes: 64 * 1024, maxConnections: 3 });

  const slow = await openSse(baseUrl, tenant.user, id);
  const slowSocket = opened(await openEventSocket(baseUrl, tenant.user));
  slowSocket.send({ type: "subscribe", clusterId: id });
  await slow.waitFor(() => hasSettled(slow), "the history");
  await slowSocket.waitFor((m) => m.some((x) => x.type === "event" && settledStatus(x.event)), "the history on the socket");
  slow.pause();
  slowSocket.pause();

  // The cap: two streams are open, a third fits, a fourth does not (SSE and WebSocket alike).
  const third = await openSse(baseUrl, tenant.user, id);
  t.is(third.status, 200);
  const overSse = await openSse(baseUrl, tenant.user, id);
  t.is(overSse.status, 503);
  t.regex((overSse.body as { message: string }).message, /events\.maxConnections/);
  const overSocket = await openEventSocket(baseUrl, tenant.user);
  t.like(overSocket, { refused: true, status: 503 });
  third.close();

  // Far more than socket buffers hold: events big enough to fill them, published as the clusters service would.
  const js = jetstream(sys.nc);
  const bulky = (n: number): ClusterStreamEvent => ({
    type: "task.ended",
    tenant: tenant.name,
    clusterId: id,
    at: Date.now(),
    planId: "bulk",
    taskId: `bulk-${n}`,
    taskName: "INSTALL",
    nodeId: "n",
    service: "s",
    attempt: 1,
    ok: false,
    status: 1,
    startTime: 0,
    durationMs: 0,
    resultAt: 0,
    output: { stderr: "x".repeat(200_000) },
  });
  const COUNT = 200;
  for (let n = 0; n < COUNT; n++) await js.publish(clusterEventSubject(tenant.name, id, "task.ended"), encode(bulky(n)));
  // The gateway went on serving others meanwhile.
  const fresh = await openSse(baseUrl, tenant.user, id);
  t.is(fresh.status, 200, `the slow clients were closed, so a new stream fits under the cap: ${JSON.stringify(fresh.body)}`);
  fresh.close();

  slow.resume();
  slowSocket.resume();
  await slow.ended;
  const closing = slow.messages.at(-1);
  t.like(closing, { event: "closing", data: { reason: "too_slow" } });
  t.regex((closing?.data as { message: string }).message, /fell more than 65536 bytes behind/);
  const bulkSeen = slow.events().filter((e) => e.event.type === "task.ended" && e.event.planId === "bulk").length;
  t.true(bulkSeen < COUNT, `the slow client got ${bulkSeen} of ${COUNT} before it was closed`);

  const { code, reason } = await slowSocket.closed;
  t.is(code, 1008);
  t.regex(reason, /fell more than 65536 bytes behind/);
  t.like(slowSocket.messages.at(-1), { type: "error", error: "too_slow" });
});
