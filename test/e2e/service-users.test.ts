/**
 * Issue 14, per-service NATS users (deploy/src/bus-permissions.ts, service-access.ts): every service logs in as a
 * user of its own that may reach only what that service uses. The system runs that way (startSystem), takes a
 * cluster to active and deletes it while nats-server reports no permission violation; and what a service must not
 * do is refused: the gateway reading the clusters' buckets or calling an internal endpoint, any service but auth
 * (and the gateway, which checks tokens with them) reading the signing keys, listening to another's replies.
 */
import anyTest, { type TestFn } from "ava";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { buckets, encode, inboxPrefixOf, kvStream, streams, subjects, taskSubject, withUrlCredentials } from "@corral/contracts";
import { connectNats, loadConfig, openBucket, silentLogger } from "@corral/shared";
import { startAuthService } from "@corral/auth";
import { CORRAL_SERVICES, type CorralService } from "@corral/deploy";
import { api, SUPERADMIN } from "../helpers/api.js";
import { eventually } from "../helpers/eventually.js";
import { createCluster, createClusterCatalog, waitForStatus } from "../helpers/cluster-fixture.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

const test = anyTest as TestFn<{ sys: TestSystem; dir: string; natsLog: string[] }>;

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-service-users-"));
  t.context.natsLog = [];
  t.context.sys = await startSystem({
    clusters: 1,
    provisioners: 1,
    metrics: 1,
    webhooks: 1,
    reconcileIntervalMs: 500,
    natsLog: (line) => t.context.natsLog.push(line),
  });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

type Context = { context: { sys: TestSystem }; teardown(fn: () => unknown): void };

/** A connection as `service`'s user, with its reply prefix. */
async function as(t: Context, service: CorralService): Promise<NatsConnection> {
  const { sys } = t.context;
  const login = sys.credentials?.services[service];
  if (!login) throw new Error("the system runs without credentials");
  const url = withUrlCredentials(sys.nats.url.replace(/\/\/[^@/]*@/, "//"), login);
  const nc = await connectNats({ url, name: `test-as-${service}`, inboxPrefix: inboxPrefixOf(service) });
  t.teardown(() => nc.close());
  return nc;
}

const PERMISSION = /Permissions Violation/i;
/** nats-server's log lines of what it refused ("Publish Violation", "Subscription Violation"). */
const violations = (log: string[]) => log.filter((l) => / Violation - /.test(l));

/** How a promise ended: "ok", or its error's message. */
const outcome = (p: Promise<unknown>): Promise<string> => p.then(() => "ok", (err: unknown) => (err as Error).message);

/** Resolves with a subscription's end: a permission error, or "open" when the server let it be. */
async function subscriptionOutcome(nc: NatsConnection, subject: string): Promise<string> {
  const sub = nc.subscribe(subject);
  const ended = await Promise.race([sub.closed, new Promise<string>((resolve) => setTimeout(() => resolve("open"), 1_000))]);
  sub.unsubscribe();
  return ended instanceof Error ? ended.message : String(ended ?? "closed");
}

test.serial("service users - with each service on its own user a cluster reaches active and is deleted, and nothing is refused", async (t) => {
  t.timeout(90_000);
  const { sys } = t.context;
  const catalog = await createClusterCatalog(sys.baseUrl, { workers: 4, services: [{ name: "base", actions: { install: "true", start: "true" } }] });
  const id = await createCluster(sys.baseUrl, catalog, 2);
  await waitForStatus(sys.baseUrl, catalog, id, "active", 60_000);
  t.is((await api(sys.baseUrl, "GET", "/metrics/queues", catalog.admin)).status, 200, "metrics reads the task queues");
  t.is((await api(sys.baseUrl, "DELETE", `/clusters/${id}`, catalog.admin)).status, 200);
  await waitForStatus(sys.baseUrl, catalog, id, "terminated", 60_000);
  // Tenant deletion: tenancy asks clusters, plugins and metrics to purge theirs.
  const drained = await api(sys.baseUrl, "PUT", `/tenants/${catalog.tenant}`, { ...SUPERADMIN, body: { tenant: { name: catalog.tenant, workers: 0 } } });
  t.is(drained.status, 200, drained.text);
  // 409 while the terminated cluster still counts in the tenant's usage.
  await eventually(async () => (await api(sys.baseUrl, "DELETE", `/tenants/${catalog.tenant}`, SUPERADMIN)).status === 200, {
    what: "tenant deletion accepted",
    timeoutMs: 30_000,
  });
  await eventually(async () => (await api(sys.baseUrl, "GET", `/tenants/${catalog.tenant}`, SUPERADMIN)).status === 404, {
    what: "tenant purged",
    timeoutMs: 30_000,
  });
  t.deepEqual(violations(t.context.natsLog), [], "nats-server refused none of the services' requests");
});

test.serial("service users - the auth service keeps the signing keys; only the gateway reads them besides", async (t) => {
  const { sys, dir } = t.context;
  const realmfile = join(dir, "realm.properties");
  await writeFile(realmfile, "root: rootpw,superadmin\n");
  const auth = await startAuthService({
    nc: await as(t, "auth"),
    log: silentLogger,
    config: loadConfig({
      overrides: {
        "security.enabled": true,
        "security.authentication.basic.realmfile": realmfile,
        "redis.url": sys.redis!.url,
        "security.auth.server.address": "127.0.0.1",
        "security.auth.server.bind.port": 0,
      },
    }),
  });
  t.teardown(() => auth.stop());
  const gatewayKeys = await openBucket(await as(t, "gateway"), buckets.authKeys);
  const keys: string[] = [];
  for await (const key of await gatewayKeys.keys()) keys.push(key);
  t.true(keys.length > 0, "the gateway reads the key the auth service made");
  t.regex(await outcome(gatewayKeys.put("forged", encode({ secret: "x", createdAtMs: 0 }))), PERMISSION, "the gateway may not write a key");
  t.deepEqual(violations(t.context.natsLog).filter((l) => l.includes('"corral-auth"')), [], "the auth service was refused nothing");
  for (const service of CORRAL_SERVICES.filter((s) => s !== "auth" && s !== "gateway")) {
    const nc = await as(t, service);
    t.regex(await outcome(openBucket(nc, buckets.authKeys)), PERMISSION, `${service} cannot open the signing keys`);
    t.regex(await subscriptionOutcome(nc, `$KV.${buckets.authKeys}.>`), PERMISSION, `${service} cannot listen to key writes`);
  }
});

test.serial("service users - the gateway reaches the services' REST endpoints only: no bucket of theirs, no internal endpoint", async (t) => {
  const gateway = await as(t, "gateway");
  for (const bucket of [buckets.clusters, buckets.nodes, buckets.credentials, buckets.catalog]) {
    t.regex(await outcome(openBucket(gateway, bucket)), PERMISSION, `the gateway cannot open ${bucket}`);
  }
  t.regex(await subscriptionOutcome(gateway, `$KV.${buckets.clusters}.>`), PERMISSION);
  t.regex(await outcome(gateway.request(subjects.clusters.purgeTenant, encode({ tenant: "x" }), { timeout: 2_000 })), PERMISSION);
  t.regex(await outcome((await jetstreamManager(gateway)).streams.purge(streams.events)), PERMISSION, "no purge of the events");
  t.regex(await outcome((await jetstreamManager(gateway)).streams.info(kvStream(buckets.clusters))), PERMISSION);
});

test.serial("service users - a service neither listens to another's replies or requests nor creates or changes streams", async (t) => {
  const solver = await as(t, "solver");
  t.regex(await subscriptionOutcome(solver, `${inboxPrefixOf("gateway")}.>`), PERMISSION, "the gateway's replies");
  t.regex(await subscriptionOutcome(solver, "_INBOX.>"), PERMISSION, "the default reply prefix");
  t.regex(await subscriptionOutcome(solver, subjects.clusters.create), PERMISSION, "another service's requests");
  t.regex(await outcome(solver.request(taskSubject("x"), encode({}), { timeout: 2_000 })), PERMISSION, "no task published");
  const clusters = await as(t, "clusters");
  const jsm = await jetstreamManager(clusters);
  const events = await jsm.streams.info(streams.events);
  t.regex(await outcome(jsm.streams.update(streams.events, { ...events.config, sources: [{ name: kvStream(buckets.authKeys) }] })), PERMISSION, "no stream update");
  t.regex(await outcome(jsm.streams.add({ name: "SNEAK", subjects: ["sneak.>"], sources: [{ name: kvStream(buckets.authKeys) }] })), PERMISSION, "no stream create");
  // nats-server logs what it refuses, so the first test's empty list means something.
  await eventually(async () => violations(t.context.natsLog).some((l) => l.includes("SNEAK")), { what: "the refusal in the server log" });
  t.pass();
});
