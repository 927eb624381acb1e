/**
 * Deleting a tenant (issue 10, "Tenant isolation"): refused while it has live clusters, and once done nothing of
 * it reaches a later tenant of the same name, through any route or in any store. Real services, a real
 * provisioner running `sim` clusters, real node usage in Redis.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { buckets, encode, kvKey, type HostAllocation } from "@corral/contracts";
import { hostAllocationKey, openBucket } from "@corral/shared";
import { api, SUPERADMIN, type Caller } from "../helpers/api.js";
import { assertError, assertOk, show } from "../helpers/assertions.js";
import { createClusterCatalog, type ClusterCatalog } from "../helpers/cluster-fixture.js";
import { createCluster, waitForAssignment, waitForStatus } from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";
import { NO_LEFTOVERS, tenantLeftovers } from "../helpers/tenant-leftovers.js";
import { pluginClient } from "../helpers/plugin-rest.js";

const test = testWithSystem({ clusters: 1, metrics: 1, webhooks: 1, provisioners: 1, requestTimeoutMs: 30_000 });
type T = SystemTest;

const call = (t: T, caller: Caller, method: string, path: string, body?: unknown) =>
  api(t.context.sys.baseUrl, method, path, { ...caller, body });

const setWorkers = async (t: T, tenant: string, workers: number) =>
  assertOk(t, await call(t, SUPERADMIN, "PUT", `/tenants/${tenant}`, { tenant: { name: tenant, workers } }), `workers ${workers}`);

const alice = (catalog: ClusterCatalog): Caller => ({ user: "alice", tenant: catalog.tenant });

/** A tenant with workers and a one-service `sim` catalog. */
const catalogWithWorkers = (t: T) =>
  createClusterCatalog(t.context.sys.baseUrl, { workers: 2, services: [{ name: "base", actions: { install: "true", start: "true" } }] });

async function activeCluster(t: T, catalog: ClusterCatalog, caller: Caller, numMachines = 1): Promise<string> {
  const id = await createCluster(t.context.sys.baseUrl, caller, { name: `c${randomUUID().slice(0, 6)}`, clusterTemplate: catalog.template, numMachines });
  await waitForStatus(t.context.sys.baseUrl, caller, id, "active", 60_000);
  return id;
}

async function terminate(t: T, caller: Caller, id: string): Promise<void> {
  assertOk(t, await call(t, caller, "DELETE", `/clusters/${id}`), `delete cluster ${id}`);
  await waitForStatus(t.context.sys.baseUrl, caller, id, "terminated", 60_000);
}

/** Node-seconds the caller sees (`GET /metrics/nodes/usage`). */
async function nodeSeconds(t: T, caller: Caller, query = ""): Promise<number> {
  const res = await call(t, caller, "GET", `/metrics/nodes/usage${query}`);
  if (res.status !== 200) throw new Error(`node usage: ${show(res)}`);
  return (res.body as { data: Array<{ value: number }> }).data[0]?.value ?? 0;
}

test("tenant delete - refused with 409 naming the live clusters; the tenant and its clusters stay", async (t) => {
  const catalog = await catalogWithWorkers(t);
  await waitForAssignment(t.context.sys.nc, catalog.tenant);
  const ids = [await activeCluster(t, catalog, catalog.admin), await activeCluster(t, catalog, alice(catalog))];
  await setWorkers(t, catalog.tenant, 0);

  const refused = await call(t, SUPERADMIN, "DELETE", `/tenants/${catalog.tenant}`);
  assertError(t, refused, 409, "delete with live clusters");
  t.like(refused.body, { error: "not_deletable", message: `tenant ${catalog.tenant} has 2 live clusters; delete them first` });

  assertOk(t, await call(t, SUPERADMIN, "GET", `/tenants/${catalog.tenant}`), "the tenant is still there");
  const listed = await call(t, catalog.admin, "GET", "/clusters");
  assertOk(t, listed, "its clusters are still listed");
  t.deepEqual((listed.body as Array<{ id: string }>).map((c) => c.id).sort(), [...ids].sort());
  assertOk(t, await call(t, catalog.admin, "GET", "/providers"), "its users still get in");

  // Terminated clusters do not count.
  await setWorkers(t, catalog.tenant, 2);
  await waitForAssignment(t.context.sys.nc, catalog.tenant);
  await terminate(t, catalog.admin, ids[0]!);
  await setWorkers(t, catalog.tenant, 0);
  t.like((await call(t, SUPERADMIN, "DELETE", `/tenants/${catalog.tenant}`)).body, { message: `tenant ${catalog.tenant} has 1 live clusters; delete them first` });
  await setWorkers(t, catalog.tenant, 2);
  await waitForAssignment(t.context.sys.nc, catalog.tenant);
  await terminate(t, catalog.admin, ids[1]!);
  await setWorkers(t, catalog.tenant, 0);
  assertOk(t, await call(t, SUPERADMIN, "DELETE", `/tenants/${catalog.tenant}`), "delete once every cluster is terminated");
});

test("tenant delete - a later tenant of the same name sees nothing of the deleted one, through any route or store", async (t) => {
  const { sys } = t.context;
  const catalog = await catalogWithWorkers(t);
  const name = catalog.tenant;
  await waitForAssignment(sys.nc, name);
  const user = alice(catalog);
  const id = await activeCluster(t, catalog, user, 2);
  const planId = ((await call(t, user, "GET", `/clusters/${id}/plans`)).body as Array<{ id: string }>)[0]!.id;
  const scripts = pluginClient(sys.baseUrl, catalog.admin);
  assertOk(t, await scripts.upload("/plugins/automatortypes/shell/scripts/tool.sh", "echo old"), "upload a script");
  // What crashes can leave behind (a failed delete keeps provider fields and a generated key; a failed cleanup
  // quarantines a host), written as the clusters service and the provisioners write them.
  const pool = await call(t, catalog.admin, "POST", "/providers", { name: "pool", providertype: "hostpool", provisioner: { hosts: "10.0.0.7", ssh_password: "pw" } });
  assertOk(t, pool, "hostpool provider");
  const quarantined: HostAllocation = { host: "10.0.0.7:22", state: "quarantined", clusterId: id, nodeId: "n1", since: 1000, reason: "cleanup exited with 3" };
  await (await openBucket(sys.nc, buckets.hostPool)).put(hostAllocationKey(name, "pool", quarantined.host), encode(quarantined));
  await (await openBucket(sys.nc, buckets.clusterKeys)).put(kvKey(name, id), encode({ privateKey: "old", publicKey: "old", createdAt: 1 }));
  await eventually(async () => (await nodeSeconds(t, user)) > 0, { what: "node usage of the old cluster recorded" });
  await terminate(t, user, id);
  // Provider fields a plan of the cluster was given, as the clusters service keeps them while the plan runs.
  const fields = { clusterId: id, planId, fields: { secret: "old-secret" }, writtenAt: Date.now() };
  await (await openBucket(sys.nc, buckets.credentials)).put(kvKey(id, planId), encode(fields));
  // A task page, as a plan of more than 64 tasks has them (this small cluster's plans keep theirs in their records).
  await (await openBucket(sys.nc, buckets.planTasks)).put(kvKey(id, planId, "0", "0"), encode([{ taskName: "CREATE", nodeId: "n1", service: "" }]));

  // A webhook endpoint (the test system lets deliveries reach 127.0.0.1; nothing listens on port 9, so they fail
  // and are kept), and a delivery of it: the audit entry of the next change.
  const hook = await call(t, catalog.admin, "POST", "/webhooks", { url: "http://127.0.0.1:9/old-tenant", events: ["audit"] });
  assertOk(t, hook, "register a webhook");
  assertOk(t, await call(t, catalog.admin, "PUT", "/providers/pool", pool.body), "a change the webhook hears of");
  await eventually(async () => (await tenantLeftovers(sys.nc, name, [id], sys.redis?.url)).webhookDeliveries > 0, { what: "a delivery of the webhook" });

  // The checks below are not vacuous: all of this exists before the delete (but done tasks, which the work queue drops).
  const { tasks: _none, ...before } = await tenantLeftovers(sys.nc, name, [id], sys.redis?.url);
  for (const [what, value] of Object.entries(before)) t.truthy(Array.isArray(value) ? value.length : value, `${what} exists before the delete`);
  t.deepEqual((await call(t, catalog.admin, "GET", "/providers/pool/hosts")).body[0], { ...quarantined }, "the quarantine shows");

  await setWorkers(t, name, 0);
  const deleted = await call(t, SUPERADMIN, "DELETE", `/tenants/${name}`);
  assertOk(t, deleted, "delete the tenant");
  t.is(deleted.text, "");
  await eventually(async () => (await tenantLeftovers(sys.nc, name, [id], sys.redis?.url)).tenantRecord === false, {
    what: "the purge to finish",
    timeoutMs: 20_000,
  });
  t.deepEqual(await tenantLeftovers(sys.nc, name, [id], sys.redis?.url), NO_LEFTOVERS, "nothing of the tenant is stored anywhere");

  assertOk(t, await call(t, SUPERADMIN, "POST", "/tenants", { tenant: { name, workers: 0 } }), "create the name again");
  for (const caller of [catalog.admin, user]) {
    const who = caller.user;
    const listed = await call(t, caller, "GET", "/clusters");
    assertOk(t, listed, `${who}: list`);
    t.deepEqual(listed.body, [], `${who}: no clusters listed`);
    for (const path of [`/clusters/${id}`, `/clusters/${id}/status`, `/clusters/${id}/config`, `/clusters/${id}/plans`, `/clusters/${id}/plans/${planId}`, `/clusters/${id}/services`]) {
      assertError(t, await call(t, caller, "GET", path), 404, `${who}: GET ${path}`);
    }
    assertError(t, await call(t, caller, "POST", "/getNodeProperties", { clusterId: id }), 404, `${who}: node properties`);
    t.is(await nodeSeconds(t, caller), 0, `${who}: node usage`);
  }
  t.is(await nodeSeconds(t, catalog.admin, "?user=alice"), 0, "node usage of alice, as the tenant admin");
  t.is(await nodeSeconds(t, SUPERADMIN, `?tenant=${name}`), 0, "node usage of the tenant, as the superadmin");
  t.deepEqual((await scripts.call("GET", "/plugins/automatortypes/shell/scripts")).body, {}, "no plugin resources");
  t.deepEqual((await call(t, catalog.admin, "GET", "/webhooks")).body, [], "no webhook endpoints");
  assertError(t, await call(t, catalog.admin, "GET", `/webhooks/${(hook.body as { id: string }).id}`), 404, "the old endpoint");
  t.deepEqual((await call(t, catalog.admin, "GET", "/export")).body, { providers: [], hardwaretypes: [], imagetypes: [], services: [], clustertemplates: [] });
  assertOk(t, await call(t, catalog.admin, "POST", "/providers", pool.body), "the same hostpool provider again");
  t.deepEqual((await call(t, catalog.admin, "GET", "/providers/pool/hosts")).body, [{ host: "10.0.0.7:22", state: "free" }], "the old quarantine is gone");
});

test("tenant delete - a cluster created while the tenant is deleted is either counted (409) or refused, never left behind", async (t) => {
  const { sys } = t.context;
  const outcomes = new Set<string>();
  for (let round = 0; round < 10; round++) {
    // No workers: a cluster that gets in stays pending, so live.
    const catalog = await createClusterCatalog(sys.baseUrl, { workers: 0, services: [{ name: "base", actions: { install: "true" } }] });
    // The delete starts a little later each round, so it lands before, inside and after the create.
    const [deleted, created] = await Promise.all([
      sleep(round * 4).then(() => call(t, SUPERADMIN, "DELETE", `/tenants/${catalog.tenant}`)),
      call(t, catalog.admin, "POST", "/clusters", { name: "racer", clusterTemplate: catalog.template, numMachines: 1 }),
    ]);
    outcomes.add(`delete ${deleted.status}, create ${created.status}`);
    if (created.status === 200) {
      assertError(t, deleted, 409, `round ${round}: the delete counted the new cluster`);
      t.like(deleted.body, { message: `tenant ${catalog.tenant} has 1 live clusters; delete them first` });
      assertOk(t, await call(t, catalog.admin, "GET", `/clusters/${(created.body as { id: string }).id}`), "the cluster is there");
    } else if (deleted.status === 200) {
      t.true([401, 404].includes(created.status), `round ${round}: create refused: ${show(created)}`);
      await eventually(async () => !(await tenantLeftovers(sys.nc, catalog.tenant, [])).tenantRecord, { what: "the purge" });
      t.deepEqual((await tenantLeftovers(sys.nc, catalog.tenant, [])).clusters, [], `round ${round}: no cluster record`);
    } else {
      // Both refused (the create reserved before the count, then saw the mark): the tenant stays, without the cluster.
      assertError(t, deleted, 409, `round ${round}: delete`);
      t.deepEqual((await call(t, catalog.admin, "GET", "/clusters")).body, [], `round ${round}: no cluster`);
    }
  }
  t.log([...outcomes].join("; "));
});
