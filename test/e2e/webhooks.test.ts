/**
 * Webhooks against real servers (docs/webhooks.md): a nats-server with the services' own users, the gateway, and
 * the webhooks service logged in as its user; a receiver on 127.0.0.1 (allowed by `webhooks.allowedNetworks`)
 * checks every signature with the Standard Webhooks library. Cluster events are published to the events stream as
 * the clusters service publishes them; audit entries come from the gateway's own recording.
 */
import anyTest, { type TestFn } from "ava";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  auditSubject,
  clusterEventSubject,
  decode,
  encode,
  entriesOfAuditMessage,
  inboxPrefixOf,
  streams,
  withUrlCredentials,
  type ClusterStatusEvent,
  type WebhookDelivery,
} from "@corral/contracts";
import { callEndpoint, connectNats, createLogger } from "@corral/shared";
import { startWebhooksService, type WebhooksService } from "@corral/webhooks";
import { api, SUPERADMIN, type Caller } from "../helpers/api.js";
import { eventually } from "../helpers/eventually.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

interface Context {
  sys: TestSystem;
  nc: NatsConnection;
  webhooks: WebhooksService;
  receiver: WebhookReceiver;
}
const test = anyTest as TestFn<Context>;

const ACME: Caller = { user: "admin", tenant: "acme" };
const BETA: Caller = { user: "admin", tenant: "beta" };
/** Names ending so resolve to a loopback address the service does not allow (a DNS name pointing inward). */
const INWARD_SUFFIX = ".inward.example";
const RETRY_DELAYS_MS = [100, 200, 300, 400];
/** Every log line of the gateway and the webhooks service, at debug: no secret may be in one. */
const logLines: string[] = [];
const capturing = (name: string) => createLogger({ service: name }, { level: "debug", write: (line) => void logLines.push(line) });

test.before(async (t) => {
  const sys = await startSystem({ logger: capturing });
  t.context.sys = sys;
  for (const tenant of ["acme", "beta"]) {
    const r = await api(sys.baseUrl, "POST", "/tenants", { ...SUPERADMIN, body: { tenant: { name: tenant, workers: 0 } } });
    if (r.status !== 200) throw new Error(`tenant ${tenant}: ${r.status} ${r.text}`);
  }
  const serverUrl = sys.nats.url.replace(/\/\/[^@/]*@/, "//");
  t.context.nc = await connectNats({
    url: withUrlCredentials(serverUrl, sys.credentials!.services.webhooks),
    name: "webhooks-0",
    inboxPrefix: inboxPrefixOf("webhooks"),
  });
  t.context.webhooks = await startWebhooksService({
    nc: t.context.nc,
    log: capturing("webhooks"),
    allowedNetworks: ["127.0.0.1/32"],
    retryDelaysMs: RETRY_DELAYS_MS,
    leaseMs: 2000,
    resolve: async (hostname) =>
      hostname.endsWith(INWARD_SUFFIX) ? [{ address: "127.0.0.2", family: 4 }] : [{ address: "127.0.0.1", family: 4 }],
  });
  t.context.receiver = await startWebhookReceiver();
});

test.after.always(async (t) => {
  await t.context.webhooks?.stop();
  await t.context.nc?.drain().catch(() => {});
  await t.context.receiver?.stop();
  await t.context.sys?.stop();
});

/** Registers an endpoint at the receiver's `path` for `events`; its id. */
async function register(t: { context: Context }, caller: Caller, path: string, events: string[]): Promise<string> {
  const { sys, receiver } = t.context;
  const r = await api(sys.baseUrl, "POST", "/webhooks", { ...caller, body: { url: receiver.url(path), events, description: path } });
  if (r.status !== 200) throw new Error(`POST /webhooks: ${r.status} ${r.text}`);
  receiver.setSecret(path, r.body.secret);
  return r.body.id as string;
}

/** Publishes `count` status events of a cluster to the events stream; `n` (progress.stepscompleted) counts them. */
async function publishStatuses(nc: NatsConnection, tenant: string, clusterId: string, from: number, count: number): Promise<void> {
  const js = jetstream(nc);
  for (let n = from; n < from + count; n++) {
    const event: ClusterStatusEvent = {
      type: "cluster.status",
      tenant,
      clusterId,
      at: Date.now(),
      status: "pending",
      action: "cluster_create",
      planId: `${clusterId}-p1`,
      progress: { stepscompleted: n, stepstotal: 1000 },
    };
    await js.publish(clusterEventSubject(tenant, clusterId, "cluster.status"), encode(event));
  }
}

const stepOf = (data: unknown) => (data as ClusterStatusEvent).progress.stepscompleted;

test.serial("registration: secrets shown once, validation errors, tenant admins only, tenants apart", async (t) => {
  const { sys, receiver } = t.context;
  const call = (caller: Caller, method: string, path: string, body?: unknown) => api(sys.baseUrl, method, path, { ...caller, ...(body ? { body } : {}) });

  const created = await call(ACME, "POST", "/webhooks", { url: receiver.url("/reg"), events: ["cluster.status", "audit"], description: "first" });
  t.is(created.status, 200, created.text);
  t.regex(created.body.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  t.is(Buffer.from(created.body.secret.slice(6), "base64").length, 32);
  const id = created.body.id as string;
  t.like(created.body, { url: receiver.url("/reg"), events: ["cluster.status", "audit"], description: "first", enabled: true });

  const given = "whsec_" + Buffer.alloc(24, 7).toString("base64");
  const withSecret = await call(ACME, "POST", "/webhooks", { url: receiver.url("/reg2"), events: ["audit"], secret: given });
  t.is(withSecret.status, 200, withSecret.text);
  t.is(withSecret.body.secret, given);

  const read = await call(ACME, "GET", `/webhooks/${id}`);
  t.is(read.status, 200);
  t.false("secret" in read.body, "the secret is never answered again");
  const listed = await call(ACME, "GET", "/webhooks");
  t.is(listed.status, 200);
  t.deepEqual(listed.body.map((w: { id: string }) => w.id).sort(), [id, withSecret.body.id].sort());
  t.false(JSON.stringify(listed.body).includes("whsec_"));

  // Another tenant neither sees nor touches it; a user is refused as on other admin routes.
  t.is((await call(BETA, "GET", `/webhooks/${id}`)).status, 404);
  t.is((await call(BETA, "PUT", `/webhooks/${id}`, { description: "x" })).status, 404);
  t.is((await call(BETA, "DELETE", `/webhooks/${id}`)).status, 404);
  t.is((await call(BETA, "GET", `/webhooks/${id}/deliveries`)).status, 404);
  t.is((await call(BETA, "POST", `/webhooks/${id}/test`)).status, 404);
  t.deepEqual((await call(BETA, "GET", "/webhooks")).body, []);
  t.is((await call({ user: "alice", tenant: "acme" }, "GET", "/webhooks")).status, 401);
  t.is((await call({ user: "alice", tenant: "acme" }, "POST", "/webhooks", { url: receiver.url("/x"), events: ["audit"] })).status, 401);

  // Validation.
  const refused = async (body: unknown, field: RegExp) => {
    const r = await call(ACME, "POST", "/webhooks", body);
    t.is(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    t.regex(r.text, field);
  };
  await refused({ events: ["audit"] }, /url/);
  await refused({ url: receiver.url("/x") }, /events/);
  await refused({ url: receiver.url("/x"), events: [] }, /events/);
  await refused({ url: receiver.url("/x"), events: ["cluster.exploded"] }, /events/);
  await refused({ url: "ftp://example.com/x", events: ["audit"] }, /url/);
  await refused({ url: receiver.url("/x"), events: ["audit"], secret: "not-a-secret" }, /secret/);
  // Addresses webhooks may not reach, refused by their text: loopback not allowed, private, link-local, metadata.
  for (const url of [
    "http://127.0.0.2:8080/x",
    "http://10.1.2.3/x",
    "http://192.168.1.1/x",
    "http://172.16.0.1/x",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]/x",
    "http://[fd00:ec2::254]/x",
    "http://[::ffff:10.0.0.1]/x",
    "http://metadata.google.internal/x",
  ]) {
    await refused({ url, events: ["audit"] }, /url/);
  }
  t.is((await call(ACME, "PUT", `/webhooks/${id}`, { url: "http://10.0.0.1/x" })).status, 400);

  const updated = await call(ACME, "PUT", `/webhooks/${id}`, { description: "second", events: ["audit"] });
  t.is(updated.status, 200, updated.text);
  t.like(updated.body, { description: "second", events: ["audit"], url: receiver.url("/reg") });
  t.is((await call(ACME, "DELETE", `/webhooks/${id}`)).status, 200);
  t.is((await call(ACME, "GET", `/webhooks/${id}`)).status, 404);
  t.is((await call(ACME, "DELETE", `/webhooks/${withSecret.body.id}`)).status, 200);
});

test.serial("deliveries are signed, in order per cluster, and each tenant gets only its own", async (t) => {
  const { sys, receiver } = t.context;
  await register(t, ACME, "/acme", ["cluster.status"]);
  await register(t, BETA, "/beta", ["cluster.status"]);
  // Another endpoint of acme that fails for a while must not hold up the first.
  await register(t, ACME, "/acme-slow", ["cluster.status"]);
  receiver.failNext("/acme-slow", 3);

  const clusters = ["c1", "c2", "c3"];
  const perCluster = 15;
  for (let round = 0; round < 3; round++) {
    for (const c of clusters) await publishStatuses(sys.nc, "acme", c, round * 5, 5);
  }
  await publishStatuses(sys.nc, "beta", "b1", 0, 5);

  await eventually(() => receiver.delivered("/acme").length === clusters.length * perCluster, { what: "acme's deliveries", timeoutMs: 20_000 });
  await eventually(() => receiver.delivered("/beta").length === 5, { what: "beta's deliveries", timeoutMs: 20_000 });
  await eventually(() => receiver.delivered("/acme-slow").length === clusters.length * perCluster, { what: "the slow endpoint's", timeoutMs: 20_000 });

  for (const path of ["/acme", "/beta", "/acme-slow"]) {
    const requests = receiver.requests(path);
    t.true(requests.every((r) => r.verified), `${path}: ${requests.find((r) => !r.verified)?.problem}`);
  }
  for (const c of clusters) {
    for (const path of ["/acme", "/acme-slow"]) {
      const steps = receiver.delivered(path).filter((r) => (r.payload.data as ClusterStatusEvent).clusterId === c).map((r) => stepOf(r.payload.data));
      t.deepEqual(steps, Array.from({ length: perCluster }, (_, i) => i), `order of ${c} at ${path}`);
    }
  }
  t.true(receiver.requests("/acme").every((r) => r.payload.tenant === "acme" && r.payload.type === "cluster.status"));
  t.true(receiver.requests("/beta").every((r) => r.payload.tenant === "beta" && (r.payload.data as ClusterStatusEvent).clusterId === "b1"));
});

test.serial("a failing endpoint is retried with the same webhook-id, and listed with attempts and timing", async (t) => {
  const { sys, receiver } = t.context;
  const id = await register(t, ACME, "/flaky", ["cluster.status"]);
  receiver.failNext("/flaky", 3, 500);
  await publishStatuses(sys.nc, "acme", "flaky-1", 0, 1);
  await eventually(() => receiver.delivered("/flaky").length === 1, { what: "the flaky delivery", timeoutMs: 10_000 });
  const attempts = receiver.requests("/flaky");
  t.is(attempts.length, 4);
  t.deepEqual(attempts.map((r) => r.answered), [500, 500, 500, 204]);
  t.is(new Set(attempts.map((r) => r.id)).size, 1, "the same webhook-id on every attempt");
  t.true(attempts.every((r) => r.verified));
  const gaps = attempts.slice(1).map((r, i) => r.receivedAt - attempts[i]!.receivedAt);
  gaps.forEach((gap, i) => t.true(gap >= RETRY_DELAYS_MS[i]! - 20, `retry ${i + 1} waited ${gap} ms`));

  const listed = await eventually(
    async () => {
      const r = await api(sys.baseUrl, "GET", `/webhooks/${id}/deliveries`, ACME);
      const first = (r.body?.deliveries as WebhookDelivery[] | undefined)?.[0];
      return first?.status === "succeeded" ? first : false;
    },
    { what: "the delivery listed as succeeded" },
  );
  t.like(listed, { id: attempts[0]!.id, type: "cluster.status", clusterId: "flaky-1", attempts: 4, responseStatus: 204 });
  t.true(typeof listed.durationMs === "number" && typeof listed.deliveredAt === "string" && typeof listed.lastAttemptAt === "string");
  const limited = await api(sys.baseUrl, "GET", `/webhooks/${id}/deliveries?limit=0`, ACME);
  t.is(limited.status, 400);
});

test.serial("an endpoint failing past its retries is disabled with the reason, and enabled again resumes", async (t) => {
  const { sys, receiver } = t.context;
  const id = await register(t, ACME, "/dead", ["cluster.status"]);
  receiver.failAlways("/dead", 503);
  await publishStatuses(sys.nc, "acme", "dead-1", 0, 2);
  const disabled = await eventually(
    async () => {
      const r = await api(sys.baseUrl, "GET", `/webhooks/${id}`, ACME);
      return r.body.enabled === false ? r.body : false;
    },
    { what: "the endpoint disabled", timeoutMs: 10_000 },
  );
  t.regex(disabled.disabled.reason, /failed 5 times.*answered 503/);
  t.is(receiver.requests("/dead").length, RETRY_DELAYS_MS.length + 1, "the second event waits behind the first, which failed for good");
  const deliveries = (await api(sys.baseUrl, "GET", `/webhooks/${id}/deliveries`, ACME)).body.deliveries as WebhookDelivery[];
  t.deepEqual(deliveries.map((d) => d.status).sort(), ["failed", "pending"]);

  receiver.failAlways("/dead", undefined);
  const enabled = await api(sys.baseUrl, "PUT", `/webhooks/${id}`, { ...ACME, body: { enabled: true } });
  t.is(enabled.status, 200, enabled.text);
  t.false("disabled" in enabled.body);
  await eventually(() => receiver.delivered("/dead").length === 1, { what: "the pending delivery after re-enabling", timeoutMs: 15_000 });
  t.is(stepOf(receiver.delivered("/dead")[0]!.payload.data), 1);
});

test.serial("a name resolving to a refused address is not delivered to", async (t) => {
  const { sys, receiver } = t.context;
  const r = await api(sys.baseUrl, "POST", "/webhooks", {
    ...ACME,
    body: { url: `http://receiver${INWARD_SUFFIX}:1/inward`, events: ["cluster.status"] },
  });
  t.is(r.status, 200, "a name is resolved at delivery, not at registration");
  const id = r.body.id as string;
  const tested = await api(sys.baseUrl, "POST", `/webhooks/${id}/test`, ACME);
  t.is(tested.status, 200, tested.text);
  t.like(tested.body, { status: "failed", type: "webhook.test", attempts: 1 });
  t.regex(tested.body.error, /loopback address \(127\.0\.0\.2\)/);
  await publishStatuses(sys.nc, "acme", "inward-1", 0, 1);
  const failed = await eventually(
    async () => {
      const list = (await api(sys.baseUrl, "GET", `/webhooks/${id}/deliveries`, ACME)).body.deliveries as WebhookDelivery[];
      const d = list.find((x) => x.type === "cluster.status");
      return d && d.attempts >= 1 ? d : false;
    },
    { what: "an attempt of the inward delivery" },
  );
  t.regex(failed.error ?? "", /resolves to a loopback address/);
  t.is(failed.responseStatus, undefined);
  await api(sys.baseUrl, "DELETE", `/webhooks/${id}`, ACME);
});

test.serial("test deliveries and audit entries reach the tenant's endpoint only", async (t) => {
  const { sys, receiver } = t.context;
  const acme = await register(t, ACME, "/audit-acme", ["audit"]);
  await register(t, BETA, "/audit-beta", ["audit"]);
  const tested = await api(sys.baseUrl, "POST", `/webhooks/${acme}/test`, ACME);
  t.is(tested.status, 200, tested.text);
  t.like(tested.body, { status: "succeeded", type: "webhook.test", attempts: 1, responseStatus: 204 });
  // Answered once the receiver answered: it has it (audit entries of the registrations may come before it).
  const sent = receiver.delivered("/audit-acme").find((r) => r.payload.type === "webhook.test");
  t.true(sent?.verified, sent?.problem);
  t.is(sent?.id, tested.body.id);

  const created = await api(sys.baseUrl, "POST", "/services", { ...ACME, body: { name: "audited", provisioner: { actions: {} } } });
  t.is(created.status, 200, created.text);
  const entry = await eventually(
    () => receiver.delivered("/audit-acme").find((r) => r.payload.type === "audit" && (r.payload.data as { target: string }).target === "audited") ?? false,
    { what: "the audit entry of the service's creation", timeoutMs: 10_000 },
  );
  t.like(entry.payload.data as object, { tenant: "acme", action: "tenancy.catalog.services.create", method: "POST", status: 200 });
  t.true(entry.verified);
  t.true(receiver.requests("/audit-beta").every((r) => r.payload.tenant === "beta"));
  t.false(receiver.requests("/audit-beta").some((r) => JSON.stringify(r.payload).includes("audited")));
  // Registering an endpoint is audited without its secret.
  t.false(receiver.requests("/audit-acme").some((r) => JSON.stringify(r.payload).includes("whsec_")));
});

test.serial("every entry of an audit batch is delivered once, with a webhook-id of its own, to its tenant only", async (t) => {
  const { sys, receiver } = t.context;
  await register(t, ACME, "/audit-burst-acme", ["audit"]);
  await register(t, BETA, "/audit-burst-beta", ["audit"]);
  const jsm = await jetstreamManager(sys.nc);
  const firstSeq = (await jsm.streams.info(streams.audit)).state.last_seq + 1;
  // Changes of two tenants at once: the gateway records them in batches, a message per tenant and flush.
  const names = Array.from({ length: 24 }, (_, i) => `burst-${i}`);
  const created = await Promise.all(
    names.map((name, i) => api(sys.baseUrl, "POST", "/services", { ...(i % 3 === 2 ? BETA : ACME), body: { name, provisioner: { actions: {} } } })),
  );
  t.true(created.every((r) => r.status === 200));
  const ofAcme = names.filter((_, i) => i % 3 !== 2);
  const ofBeta = names.filter((_, i) => i % 3 === 2);
  const burstTargets = (path: string) =>
    receiver
      .delivered(path)
      .filter((r) => r.payload.type === "audit" && (r.payload.data as { target: string }).target.startsWith("burst-"));
  await eventually(() => burstTargets("/audit-burst-acme").length >= ofAcme.length && burstTargets("/audit-burst-beta").length >= ofBeta.length, {
    what: "every entry of the burst delivered",
    timeoutMs: 15_000,
  });

  const { state } = await jsm.streams.info(streams.audit);
  const held: Array<{ subject: string; tenants: string[] }> = [];
  for (let seq = firstSeq; seq <= state.last_seq; seq++) {
    const stored = await jsm.streams.getMessage(streams.audit, { seq });
    if (stored) held.push({ subject: stored.subject, tenants: entriesOfAuditMessage(decode(stored.data)).map((e) => e.tenant) });
  }
  t.true(held.some((m) => m.tenants.length > 1), `messages of ${held.map((m) => m.tenants.length).join(", ")} entries`);
  t.true(held.every((m) => m.tenants.every((tenant) => auditSubject(tenant) === m.subject)), "two tenants never share a message");

  for (const [path, mine, tenant] of [
    ["/audit-burst-acme", ofAcme, "acme"],
    ["/audit-burst-beta", ofBeta, "beta"],
  ] as const) {
    const delivered = burstTargets(path);
    t.deepEqual(delivered.map((r) => (r.payload.data as { target: string }).target).sort(), [...mine].sort(), `${path}: each entry once`);
    t.is(new Set(delivered.map((r) => r.id)).size, delivered.length, "a webhook-id per entry");
    t.true(delivered.every((r) => r.verified && r.payload.tenant === tenant));
  }
});

test.serial("a deleted tenant's endpoints and deliveries are purged, and no other tenant's", async (t) => {
  const { sys } = t.context;
  const before = (await api(sys.baseUrl, "GET", "/webhooks", BETA)).body as Array<{ id: string }>;
  t.true(before.length > 0);
  const acme = ((await api(sys.baseUrl, "GET", "/webhooks", ACME)).body as unknown[]).length;
  t.deepEqual(await callEndpoint(sys.nc, "webhooks.purgeTenant", { tenant: "beta" }), { removed: before.length });
  t.deepEqual((await api(sys.baseUrl, "GET", "/webhooks", BETA)).body, []);
  t.is((await api(sys.baseUrl, "GET", `/webhooks/${before[0]!.id}/deliveries`, BETA)).status, 404);
  t.is(((await api(sys.baseUrl, "GET", "/webhooks", ACME)).body as unknown[]).length, acme);
  t.deepEqual(await callEndpoint(sys.nc, "webhooks.purgeTenant", { tenant: "beta" }), { removed: 0 });
});

test.serial("no log line holds a secret", async (t) => {
  const { sys, receiver } = t.context;
  const given = "whsec_" + Buffer.alloc(32, 9).toString("base64");
  const r = await api(sys.baseUrl, "POST", "/webhooks", { ...ACME, body: { url: receiver.url("/logged"), events: ["audit"], secret: given } });
  t.is(r.status, 200, r.text);
  await api(sys.baseUrl, "POST", `/webhooks/${r.body.id}/test`, ACME);
  t.true(logLines.length > 0, "the processes logged");
  t.deepEqual(
    logLines.filter((line) => line.includes("whsec_") || line.includes(given.slice(6))),
    [],
  );
});
