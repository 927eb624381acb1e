/**
 * The published API description tells the truth about every answer, as judged by a validator that is not ours:
 * Stoplight Prism in proxy mode in front of a running Corral (sim provider clusters, no docker) checks every request
 * and every answer of a walk through each route of the endpoint table, successes and refusals (400, 401, 403, 404,
 * 405, 409, 413), against the document the gateway serves. Prism must find nothing: no answer (status, media type,
 * body) the document does not describe, no request the server accepts that the document refuses, and where the
 * document refuses a request, the server refuses it too. A route the walk does not reach fails the last test, so a
 * new endpoint cannot slip past.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { buckets, CATALOG_KINDS, encode } from "@corral/contracts";
import { hostAllocationKey, openBucket } from "@corral/shared";
import { SUPERADMIN, type Caller } from "../helpers/api.js";
import { uniqueName } from "../helpers/catalog.js";
import { simFixtureCatalog, waitForAssignment, waitForStatus, type E2eTenant } from "../helpers/clusters.js";
import { startPrismProxy, type PrismProxy } from "../helpers/prism.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { tableRoutes, truthClient, type RouteKey, type TruthClient } from "./truth-client.js";

interface Context {
  sys: TestSystem;
  prism: PrismProxy;
}
// Serial: the walk builds on itself (tenant, catalog, cluster), and the last test counts what it reached.
const test = anyTest.serial as TestFn<Context>;
type T = ExecutionContext<Context>;

/** The gateway's body limit here: small, so a 413 costs little. */
const MAX_REQUEST_BYTES = 64 * 1024;
/** Provider of the fixture catalog turned into `sim-secured`: a create on it needs the user field `sim_password`. */
const SECURED_PROVIDER = "digitalocean";

const exercised = new Set<RouteKey>();
/** The tenant the walk creates first and works in (a test's own `t.context` changes reach no other test). */
let tenant: E2eTenant;

test.before(async (t) => {
  const sys = await startSystem({ clusters: 1, provisioners: 1, metrics: 1, webhooks: 1, simSecured: true, reconcileIntervalMs: 500, maxRequestBytes: MAX_REQUEST_BYTES });
  t.context.sys = sys;
  t.context.prism = await startPrismProxy({ document: `${sys.baseUrl}/openapi.json`, upstream: sys.baseUrl });
});
test.after.always(async (t) => {
  await t.context.prism?.stop();
  await t.context.sys?.stop();
});

/** A client through Prism for one test; its findings are asserted at the end of the test. */
function client(t: T): TruthClient {
  return truthClient(t.context.prism.url, exercised);
}

/** Prism found nothing in any call of the test; on failure, its last lines of output help. */
function assertNoFindings(t: T, walk: TruthClient): void {
  t.deepEqual(walk.findings, [], "what Prism found (request or answer not as the document says)");
}

/** Runs a walk; a thrown error (an unexpected status) is reported with what Prism found until then. */
async function walkThrough(t: T, steps: (walk: TruthClient) => Promise<void>): Promise<void> {
  const walk = client(t);
  try {
    await steps(walk);
  } catch (err) {
    t.log(`Prism found so far:\n${walk.findings.join("\n") || "(nothing)"}\nPrism's last lines:\n${t.context.prism.output().slice(-15).join("\n")}`);
    throw err;
  }
  assertNoFindings(t, walk);
}

test("the gateway's own answers: status, the description, its docs, and refusals before any service", async (t) => {
  await walkThrough(t, async (walk) => {
    await walk.call({}, "GET", "/status");
    await walk.call({}, "GET", "/openapi.json");
    await walk.call({}, "GET", "/docs");
    await walk.call({}, "GET", "/docs/init.js");
    await walk.call({}, "GET", "/docs/nothing.js", { status: 404 });
    await walk.call({}, "GET", "/clusters", { status: 401, documentRefuses: true });
    await walk.call({ user: "alice", tenant: "nobody" }, "GET", "/clusters", { status: 401 });
    await walk.call(SUPERADMIN, "GET", "/events", { status: 426 });
    await walk.call(SUPERADMIN, "GET", "/clusters/00000000/events", { status: 404 });
    await walk.call(SUPERADMIN, "GET", "/clusters/00000000/events?since=soon", { status: 400 });
  });
});

test("tenants and provisioners, with their refusals", async (t) => {
  const { sys } = t.context;
  await walkThrough(t, async (walk) => {
    const name = uniqueName("truth");
    await walk.call(SUPERADMIN, "POST", "/tenants", { body: { tenant: { name, workers: 3, description: "document truth" } } });
    await waitForAssignment(sys.nc, name);
    tenant = { name, admin: { user: "admin", tenant: name }, user: { user: "alice", tenant: name }, other: { user: "bob", tenant: name } };
    await walk.call(SUPERADMIN, "GET", "/tenants");
    await walk.call(SUPERADMIN, "GET", `/tenants/${name}`);
    await walk.call(SUPERADMIN, "PUT", `/tenants/${name}`, { body: { tenant: { name, workers: 3, maxClusters: 10 } } });
    const provisioners = (await walk.call(SUPERADMIN, "GET", "/provisioners")).body as Array<{ id: string }>;
    await walk.call(SUPERADMIN, "GET", `/provisioners/${provisioners[0]?.id}`);

    await walk.call(SUPERADMIN, "POST", "/tenants", { body: { tenant: { name, workers: 3 } }, status: 409 });
    await walk.call(SUPERADMIN, "POST", "/tenants", { body: { tenant: { workers: 3 } }, status: 400, documentRefuses: true });
    await walk.call(SUPERADMIN, "GET", "/tenants/no-such-tenant", { status: 404 });
    await walk.call(SUPERADMIN, "GET", "/provisioners/no-such-provisioner", { status: 404 });
    await walk.call(tenant.admin, "GET", "/tenants", { status: 401 });
    await walk.call(SUPERADMIN, "DELETE", "/tenants/superadmin", { status: 403 });

    const gone = uniqueName("truth-gone");
    await walk.call(SUPERADMIN, "POST", "/tenants", { body: { tenant: { name: gone, workers: 0 } } });
    await walk.call(SUPERADMIN, "DELETE", `/tenants/${gone}`);
  });
});

test("the catalog: import and export, each kind's five operations, hostpool hosts, with their refusals", async (t) => {
  const { sys } = t.context;
  const { admin, user } = tenant;
  await walkThrough(t, async (walk) => {
    await walk.call(user, "POST", "/import", { body: {}, status: 403 });
    await walk.call(admin, "POST", "/import", { body: simFixtureCatalog({ providerTypes: { [SECURED_PROVIDER]: "sim-secured" } }) });
    await walk.call(user, "GET", "/export");
    for (const kind of CATALOG_KINDS) {
      const [first] = (await walk.call(user, "GET", `/${kind}`)).body as Array<Record<string, unknown>>;
      const copy = `${String(first?.["name"])}-copy`;
      await walk.call(admin, "POST", `/${kind}`, { body: { ...first, name: copy } });
      await walk.call(user, "GET", `/${kind}/${copy}`);
      await walk.call(admin, "PUT", `/${kind}/${copy}`, { body: { ...first, name: copy, description: "changed" } });
      await walk.call(admin, "DELETE", `/${kind}/${copy}`);
      await walk.call(user, "GET", `/${kind}/${copy}`, { status: 404 });
      await walk.call(user, "POST", `/${kind}`, { body: { ...first, name: copy }, status: 401 });
    }
    const [small] = (await walk.call(user, "GET", "/hardwaretypes")).body as Array<Record<string, unknown>>;
    await walk.call(admin, "POST", "/hardwaretypes", { body: { ...small, name: "bad name!" }, status: 400, documentRefuses: true });

    await walk.call(admin, "POST", "/providers", {
      body: { name: "pool", providertype: "hostpool", provisioner: { hosts: "10.9.0.1, 10.9.0.2", ssh_password: "pw" } },
    });
    const allocations = await openBucket(sys.nc, buckets.hostPool);
    const quarantined = { host: "10.9.0.2:22", state: "quarantined", clusterId: "00000009", nodeId: "n9", since: 1000, reason: "r" };
    await allocations.put(hostAllocationKey(tenant.name, "pool", quarantined.host), encode(quarantined));
    await walk.call(admin, "GET", "/providers/pool/hosts");
    await walk.call(admin, "DELETE", `/providers/pool/hosts/${quarantined.host}/quarantine`);
    await walk.call(admin, "GET", "/providers/nothing/hosts", { status: 404 });
  });
});

test("a sim cluster through every operation, dry runs and refusals included", async (t) => {
  const { sys } = t.context;
  const { user, other } = tenant;
  const settled = (id: string) => waitForStatus(sys.baseUrl, user, id, "active");
  await walkThrough(t, async (walk) => {
    // numMachines as a numeric string: the spec allows it and the server takes it, so the document must too.
    const create = { name: "truth", clusterTemplate: "webapp", numMachines: "1", initialLeaseDuration: 3_600_000 };
    await walk.call(user, "POST", "/clusters?dryRun=true", { body: create });
    const { id } = (await walk.call(user, "POST", "/clusters", { body: create })).body as { id: string };
    await settled(id);

    await walk.call(user, "GET", "/clusters");
    await walk.call(user, "GET", "/clusters?status=active,pending");
    await walk.call(user, "GET", "/clusters?status=Active");
    await walk.call(user, "GET", "/clusters?status=sleeping", { status: 400, documentRefuses: true });
    await walk.call(user, "GET", `/clusters/${id}`);
    await walk.call(user, "GET", `/clusters/${id}/status`);
    const plans = (await walk.call(user, "GET", `/clusters/${id}/plans`)).body as Array<{ id: string }>;
    await walk.call(user, "GET", `/clusters/${id}/plans/${plans[0]?.id}`);
    await walk.call(user, "GET", `/clusters/${id}/plans/${id}-999`, { status: 404 });
    await walk.call(user, "GET", `/clusters/${id}/config`);
    await walk.call(user, "GET", `/clusters/${id}/services`);
    await walk.call(user, "POST", "/getNodeProperties", { body: { clusterId: id } });
    await walk.call(user, "POST", "/getNodeProperties", { body: { properties: ["hostname"] }, status: 400, documentRefuses: true });
    await walk.call(user, "POST", "/getNodeProperties", { body: { clusterId: "00000000" }, status: 404 });
    await walk.call(user, "POST", `/clusters/${id}`, { body: { expireTime: Date.now() + 7_200_000 } });

    for (const [method, path, body] of [
      ["PUT", `/clusters/${id}/config`, { config: { a: 1 }, restart: false }],
      ["POST", `/clusters/${id}/services`, { services: ["redis"] }],
      ["POST", `/clusters/${id}/nodes`, { numMachines: "1" }],
      ["POST", `/clusters/${id}/services/stop`, undefined],
      ["POST", `/clusters/${id}/services/start`, undefined],
      ["POST", `/clusters/${id}/services/restart`, undefined],
      ["POST", `/clusters/${id}/services/nginx/stop`, undefined],
      ["POST", `/clusters/${id}/services/nginx/start`, undefined],
      ["POST", `/clusters/${id}/services/nginx/restart`, {}],
      ["POST", `/clusters/${id}/nodes`, { numMachines: 1 }],
      ["DELETE", `/clusters/${id}/nodes/${id}-1001`, { restart: false }],
      ["POST", `/clusters/${id}/nodes/remove`, { nodes: [`${id}-1002`] }],
      ["POST", `/clusters/${id}/nodes/${id}-1000/replace`, undefined],
    ] as const) {
      await walk.call(user, method, `${path}?dryRun=true`, body !== undefined ? { body } : {});
      await walk.call(user, method, path, body !== undefined ? { body } : {});
      await settled(id);
    }

    // Refusals: unknown cluster, another user's cluster, bodies the document and the server refuse, a missing
    // provider field, a body over the gateway's limit.
    await walk.call(user, "GET", "/clusters/00000000", { status: 404 });
    await walk.call(other, "GET", `/clusters/${id}`, { status: 404 });
    await walk.call(user, "POST", "/clusters", { body: { name: "no-template" }, status: 400, documentRefuses: true });
    await walk.call(user, "POST", "/clusters", { body: { ...create, numMachines: 0 }, status: 400, documentRefuses: true });
    await walk.call(user, "POST", "/clusters", { body: { ...create, name: "secured", provider: SECURED_PROVIDER }, status: 400 });
    await walk.call(user, "PUT", `/clusters/${id}/config`, { body: { restart: true }, status: 400, documentRefuses: true });
    await walk.call(user, "POST", `/clusters/${id}/services`, { body: { services: "redis" }, status: 400, documentRefuses: true });
    await walk.call(user, "DELETE", `/clusters/${id}/nodes/${id}-1999`, { status: 404 });
    // Node 1003 replaced node 1000 and is the cluster's last.
    await walk.call(user, "DELETE", `/clusters/${id}/nodes/${id}-1003`, { status: 409 });
    await walk.call(user, "POST", `/clusters/${id}/nodes/${id}-1000/replace`, { status: 404 });
    await walk.call(user, "POST", `/clusters/${id}/nodes/${id}-1003/replace`, { body: { restart: "maybe" }, status: 400, documentRefuses: true });
    await walk.call(user, "POST", `/clusters/${id}/nodes/remove`, { body: { nodes: [] }, status: 400, documentRefuses: true });
    await walk.call(user, "POST", "/clusters", { body: { ...create, description: "x".repeat(MAX_REQUEST_BYTES) }, status: 413 });

    await walk.call(user, "DELETE", `/clusters/${id}?dryRun=true`);
    await walk.call(user, "DELETE", `/clusters/${id}`);
    await waitForStatus(sys.baseUrl, user, id, "terminated");
    await walk.call(user, "GET", `/clusters/${id}`);
    await walk.call(user, "POST", `/clusters/${id}/services/start`, { status: 409 });
  });
});

test("plugin types and resources, with their refusals", async (t) => {
  const { admin, user } = tenant;
  await walkThrough(t, async (walk) => {
    await walk.call(user, "GET", "/plugins/automatortypes");
    await walk.call(user, "GET", "/plugins/providertypes/sim");
    await walk.call(user, "GET", "/plugins/providertypes/nothing", { status: 404 });
    const tool = "/plugins/automatortypes/shell/scripts/tool.sh";
    await walk.upload(admin, tool, "echo v1");
    await walk.upload(admin, tool, "echo v2");
    await walk.upload(user, tool, "echo v3", { status: 401 });
    await walk.call(admin, "GET", "/plugins/automatortypes/shell/scripts");
    await walk.call(admin, "GET", "/plugins/automatortypes/shell/scripts?status=staged");
    await walk.call(admin, "POST", `${tool}/versions/1/stage`);
    await walk.call(admin, "POST", "/plugins/sync");
    await walk.call(admin, "GET", `${tool}?status=active`);
    await walk.call(admin, "GET", `${tool}?status=ACTIVE`);
    await walk.call(admin, "GET", `${tool}?status=lost`, { status: 400, documentRefuses: true });
    await walk.call(admin, "DELETE", `${tool}/versions/1`, { status: 409 });
    await walk.call(admin, "DELETE", tool, { status: 409 });
    await walk.call(admin, "POST", `${tool}/versions/1/recall`);
    await walk.call(admin, "POST", "/plugins/sync");
    await walk.call(admin, "POST", `${tool}/versions/9/stage`, { status: 404 });
    await walk.call(admin, "DELETE", `${tool}/versions/2`);
    await walk.call(admin, "DELETE", tool);
    await walk.call(admin, "GET", tool, { status: 404 });
    await walk.call(user, "POST", "/plugins/sync", { status: 401 });
  });
});

test("metrics: queues, node usage and the audit log, with their refusals", async (t) => {
  const { admin, user } = tenant;
  await walkThrough(t, async (walk) => {
    await walk.call(admin, "GET", "/metrics/queues");
    await walk.call(SUPERADMIN, "GET", "/metrics/queues");
    await walk.call(user, "GET", "/metrics/queues", { status: 403 });
    await walk.call(user, "GET", "/metrics/nodes/usage");
    await walk.call(admin, "GET", "/metrics/nodes/usage?start=1&end=2000000000");
    await walk.call(SUPERADMIN, "GET", `/metrics/nodes/usage?tenant=${tenant.name}`);
    await walk.call(user, "GET", "/metrics/nodes/usage?user=carol", { status: 403 });
    await walk.call(admin, "GET", `/metrics/nodes/usage?tenant=${tenant.name}`, { status: 405 });
    // The window's bounds are read by the metrics service after the caller's rights (405 and 403 come first), so
    // the declaration takes any text there and the document cannot refuse this one itself.
    await walk.call(admin, "GET", "/metrics/nodes/usage?start=soon", { status: 400 });

    await walk.call(admin, "GET", "/audit");
    await walk.call(SUPERADMIN, "GET", "/audit?action=clusters.&limit=2");
    await walk.call(user, "GET", "/audit", { status: 401 });
    await walk.call(admin, "GET", "/audit?limit=0", { status: 400, documentRefuses: true });
    await walk.call(admin, "GET", "/audit?since=soon", { status: 400 });
  });
});

test("webhooks: endpoints, deliveries and a test delivery, with their refusals", async (t) => {
  const { admin, user } = tenant;
  await walkThrough(t, async (walk) => {
    // Nothing listens on port 9: deliveries fail, which the answers describe too.
    const url = "http://127.0.0.1:9/hook";
    const created = await walk.call(admin, "POST", "/webhooks", { body: { url, events: ["cluster.status", "audit"], description: "truth" } });
    const id = created.body.id as string;
    await walk.call(admin, "GET", "/webhooks");
    await walk.call(admin, "GET", `/webhooks/${id}`);
    await walk.call(admin, "PUT", `/webhooks/${id}`, { body: { events: ["audit"], enabled: true } });
    await walk.call(admin, "POST", `/webhooks/${id}/test`);
    await walk.call(admin, "GET", `/webhooks/${id}/deliveries?limit=5`);
    await walk.call(user, "GET", "/webhooks", { status: 401 });
    await walk.call(admin, "POST", "/webhooks", { body: { url: "http://10.0.0.1/hook", events: ["audit"] }, status: 400 });
    await walk.call(admin, "POST", "/webhooks", { body: { url, events: [] }, status: 400, documentRefuses: true });
    await walk.call(admin, "GET", "/webhooks/nope", { status: 404 });
    await walk.call(admin, "DELETE", `/webhooks/${id}`);
  });
});

test("every route of the endpoint table was exercised through Prism", (t) => {
  const missed = tableRoutes()
    .map((r) => r.key)
    .filter((key) => !exercised.has(key));
  t.deepEqual(missed, [], "routes the walk did not reach: add them to a test above");
});
