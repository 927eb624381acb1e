/**
 * The bus as `npm start` sets it up (deploy/src/bus-permissions.ts): services log in as the services user,
 * provisioners as the provisioner user, which reaches only what a provisioner uses. Issue 10, "Credentials on
 * the bus": the token signing keys (bucket corral_auth_keys) are not readable by provisioners.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import {
  buckets,
  decode,
  encode,
  healthCheckSubject,
  healthReportFilter,
  healthReportSubject,
  kvKey,
  kvStream,
  kvSubjectPrefix,
  PROVISIONER_INBOX_PREFIX,
  streams,
  streamSubjects,
  subjects,
  type ApiRequest,
} from "@corral/contracts";
import { connectNats, openBucket } from "@corral/shared";
import { api, SUPERADMIN } from "../helpers/api.js";
import { createCluster, createClusterCatalog, waitForStatus } from "../helpers/cluster-fixture.js";
import { waitForAssignment } from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 1, provisioners: 1, reconcileIntervalMs: 500 });

const AUTH_KEYS_STREAM = kvStream(buckets.authKeys);
const AUTH_KEYS_SUBJECTS = kvSubjectPrefix(buckets.authKeys);
const SIGNING_KEY = "key1";

async function asProvisioner(t: SystemTest): Promise<NatsConnection> {
  const nc = await connectNats({ url: t.context.sys.provisionerNatsUrl, name: "test-provisioner-user", inboxPrefix: PROVISIONER_INBOX_PREFIX });
  t.teardown(() => nc.close());
  return nc;
}

/** A signing key as the auth service keeps it, written as the services user. */
async function putSigningKey(t: SystemTest): Promise<void> {
  const keys = await openBucket(t.context.sys.nc, buckets.authKeys);
  await keys.put(SIGNING_KEY, JSON.stringify({ secret: "signing-secret", createdAtMs: Date.now() }));
}

/** Resolves with the subscription's end: a permission error, or "open" when the server let it be. */
async function subscriptionOutcome(nc: NatsConnection, subject: string): Promise<string> {
  const sub = nc.subscribe(subject);
  const ended = await Promise.race([sub.closed, new Promise<string>((resolve) => setTimeout(() => resolve("open"), 1_500))]);
  sub.unsubscribe();
  return ended instanceof Error ? ended.message : String(ended ?? "closed");
}

const PERMISSION = /Permissions Violation/;

test("bus permissions - the provisioner user cannot read, watch or copy the signing keys' bucket", async (t) => {
  await putSigningKey(t);
  const nc = await asProvisioner(t);
  const jsm = await jetstreamManager(nc);
  const refusals: Array<[string, Promise<unknown>]> = [
    ["open the bucket", openBucket(nc, buckets.authKeys)],
    ["stream message get", jsm.streams.getMessage(AUTH_KEYS_STREAM, { last_by_subj: `${AUTH_KEYS_SUBJECTS}${SIGNING_KEY}` })],
    ["direct get", jsm.direct.getMessage(AUTH_KEYS_STREAM, { last_by_subj: `${AUTH_KEYS_SUBJECTS}${SIGNING_KEY}` })],
    ["consumer on it", jsm.consumers.add(AUTH_KEYS_STREAM, { name: "steal" })],
    ["a stream sourcing it", jsm.streams.add({ name: "steal", subjects: ["steal.>"], sources: [{ name: AUTH_KEYS_STREAM }] })],
    ["its stream info", jsm.streams.info(AUTH_KEYS_STREAM)],
  ];
  for (const [what, attempt] of refusals) {
    const err = await t.throwsAsync(attempt, undefined, what);
    t.regex(err?.message ?? "", PERMISSION, what);
  }
  t.regex(await subscriptionOutcome(nc, `${AUTH_KEYS_SUBJECTS}>`), PERMISSION, "subscribing to the bucket's subjects");
  // Services' replies (a gateway's KV read of the signing keys among them) go to `_INBOX.*`.
  t.regex(await subscriptionOutcome(nc, "_INBOX.>"), PERMISSION, "listening to other users' replies");

  const services = await jetstreamManager(t.context.sys.nc);
  const stored = await services.streams.getMessage(AUTH_KEYS_STREAM, { last_by_subj: `${AUTH_KEYS_SUBJECTS}${SIGNING_KEY}` });
  t.truthy(stored, "the services user reads the key (so the refusals above are the permissions at work)");
  t.is(await subscriptionOutcome(t.context.sys.nc, "_INBOX.>"), "open");
});

test("bus permissions - the provisioner user can neither ask as the gateway nor answer as a service", async (t) => {
  const nc = await asProvisioner(t);
  for (const subject of [subjects.auth.verify, subjects.tenancy.tenants.list, subjects.clusters.list]) {
    const err = await t.throwsAsync(nc.request(subject, "{}", { timeout: 2_000 }), undefined, subject);
    t.regex(err?.message ?? "", PERMISSION, subject);
  }
  t.regex(await subscriptionOutcome(nc, subjects.auth.verify), PERMISSION, "serving corral.auth.verify");
  t.regex(await subscriptionOutcome(nc, "corral.tenancy.>"), PERMISSION, "serving corral.tenancy.>");
  t.regex(await subscriptionOutcome(nc, streamSubjects[streams.tasks]), PERMISSION, "reading task messages besides its pulls");
});

test("bus permissions - a push consumer of the provisioner user aimed at a service subject gets no request served", async (t) => {
  // nats-server lets a consumer's creator name any deliver subject (nats-io/nats-server#8274); the stored message
  // is one the provisioner user may write (its registry bucket), made to look like the gateway's request.
  const nc = await asProvisioner(t);
  const tenant = `forged-${Date.now()}`;
  const forged: ApiRequest = {
    identity: { userId: "admin", tenant: "superadmin", role: "superadmin" },
    params: {},
    query: {},
    body: { tenant: { name: tenant, workers: 1 } },
  };
  const key = `forged-${Date.now()}`;
  const registry = await openBucket(nc, buckets.provisioners);
  await registry.put(key, encode(forged));
  // A listener of the test's own sees the delivery arrive where the tenancy service listens.
  let delivered = false;
  const spy = t.context.sys.nc.subscribe(subjects.tenancy.tenants.create, {
    callback: (_err, msg) => {
      if (msg.subject.endsWith(key)) delivered = true;
    },
  });
  t.teardown(() => spy.unsubscribe());
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(kvStream(buckets.provisioners), {
    name: "forged-requests",
    deliver_subject: subjects.tenancy.tenants.create,
    filter_subject: `${kvSubjectPrefix(buckets.provisioners)}${key}`,
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.All,
  });
  await eventually(async () => delivered, { what: "the forged request delivered to the tenancy service's subject" });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  t.is((await api(t.context.sys.baseUrl, "GET", `/tenants/${tenant}`, SUPERADMIN)).status, 404, "no tenant was created");
  const listing = await t.throwsAsync(jsm.consumers.list(kvStream(buckets.provisioners)).next());
  t.regex(listing?.message ?? "", PERMISSION, "other users' consumers (and their inboxes) are not listed");
});

test("bus permissions - the provisioner user keeps health targets, publishes health reports and answers health checks", async (t) => {
  const nc = await asProvisioner(t);
  const tenant = `t-health-${Date.now()}`;
  const targets = await openBucket(nc, buckets.healthTargets);
  await targets.put(kvKey(tenant, "c1", "c1-1000"), encode({ tenant }));
  t.is((await targets.get(kvKey(tenant, "c1", "c1-1000")))?.operation, "PUT");

  // The services' side hears the report (the clusters service listens there).
  const heard: unknown[] = [];
  const listening = t.context.sys.nc.subscribe(healthReportFilter, {
    callback: (_err, msg) => {
      heard.push(decode(msg.data));
    },
  });
  t.teardown(() => listening.unsubscribe());
  await t.context.sys.nc.flush();
  nc.publish(healthReportSubject(tenant), encode({ tenant, provisionerId: "p", full: false, nodes: [] }));
  await eventually(() => heard.length === 1, { what: "the report heard" });

  // An on-demand check from a service reaches the provisioner, whose answer comes back.
  const checks = nc.subscribe(healthCheckSubject(tenant), {
    callback: (_err, msg) => {
      msg.respond(encode({ provisionerId: "p", nodes: [] }));
    },
  });
  t.teardown(() => checks.unsubscribe());
  await nc.flush();
  const reply = await t.context.sys.nc.request(healthCheckSubject(tenant), encode({}), { timeout: 5_000 });
  t.deepEqual(decode(reply.data), { provisionerId: "p", nodes: [] });
  t.regex(await subscriptionOutcome(nc, healthReportFilter), PERMISSION, "reading other provisioners' reports");
});

test("bus permissions - a provisioner logged in as the provisioner user takes a cluster to active and terminated", async (t) => {
  const { sys } = t.context;
  const catalog = await createClusterCatalog(sys.baseUrl, {
    workers: 2,
    services: [{ name: "base", actions: { install: "true", configure: "true", start: "true" } }],
  });
  await waitForAssignment(sys.nc, catalog.tenant);
  const id = await createCluster(sys.baseUrl, catalog, 2);
  await waitForStatus(sys.baseUrl, catalog, id, "active", 30_000);
  t.is((await api(sys.baseUrl, "DELETE", `/clusters/${id}`, catalog.admin)).status, 200);
  await waitForStatus(sys.baseUrl, catalog, id, "terminated", 30_000);
  t.pass();
});
