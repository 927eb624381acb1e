/**
 * Crash tests of tenant deletion: tenancy and the clusters service run as real child processes. Tenancy is killed
 * (SIGKILL) in the middle of a purge, the clusters service is dead while a tenant is deleted; either way the
 * deletion is finished later, the name becomes usable again, and nothing of the old tenant is left.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { buckets, decode, kvKey, subjects, type TenantRecordHead } from "@corral/contracts";
import { openBucket, readValue } from "@corral/shared";
import { api, SUPERADMIN, type ApiResponse, type Caller } from "../helpers/api.js";
import { assertError, assertOk } from "../helpers/assertions.js";
import { createClusterCatalog, type ClusterCatalog } from "../helpers/cluster-fixture.js";
import { createCluster, waitForAssignment, waitForStatus } from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { createProcessSet, startClustersProcess, startTenancyProcess, type ProcessSet, type ServiceProcess } from "../helpers/processes.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { NO_LEFTOVERS, tenantLeftovers } from "../helpers/tenant-leftovers.js";
import { pluginClient } from "../helpers/plugin-rest.js";

interface Context {
  sys: TestSystem;
  procs: ProcessSet;
  tenancy: ServiceProcess;
  clusters: ServiceProcess;
}
const test = anyTest as TestFn<Context>;
type T = ExecutionContext<Context>;

/** Tenancy instances take over a deletion whose worker was quiet this long. */
const TAKEOVER_MS = 1_000;

test.before(async (t) => {
  const sys = await startSystem({ tenancies: 0, metrics: 1, webhooks: 1, provisioners: 1 });
  t.context.sys = sys;
  t.context.procs = createProcessSet();
  t.context.tenancy = await t.context.procs.start(() => startTenancyProcess({ natsUrl: sys.nats.url, takeoverAfterMs: TAKEOVER_MS }));
  t.context.clusters = await t.context.procs.start(() => startClustersProcess({ natsUrl: sys.nats.url }));
});

test.after.always(async (t) => {
  await t.context.procs?.stopAll();
  await t.context.sys?.stop();
});

const call = (t: T, caller: Caller, method: string, path: string, body?: unknown): Promise<ApiResponse> =>
  api(t.context.sys.baseUrl, method, path, { ...caller, body });

/** A tenant whose only cluster ran and was terminated, with a plugin resource; workers back to 0. Answers the cluster id. */
async function usedTenant(t: T): Promise<{ catalog: ClusterCatalog; clusterId: string }> {
  const { sys } = t.context;
  const catalog = await createClusterCatalog(sys.baseUrl, { workers: 2, services: [{ name: "base", actions: { install: "true" } }] });
  await waitForAssignment(sys.nc, catalog.tenant);
  const clusterId = await createCluster(sys.baseUrl, catalog.admin, { name: "c1", clusterTemplate: catalog.template, numMachines: 2 });
  await waitForStatus(sys.baseUrl, catalog.admin, clusterId, "active", 60_000);
  const upload = await pluginClient(sys.baseUrl, catalog.admin).upload("/plugins/automatortypes/shell/scripts/tool.sh", "echo old");
  if (upload.status !== 200) throw new Error(`upload: HTTP ${upload.status} ${upload.text}`);
  assertOk(t, await call(t, catalog.admin, "DELETE", `/clusters/${clusterId}`), "delete the cluster");
  await waitForStatus(sys.baseUrl, catalog.admin, clusterId, "terminated", 60_000);
  const workers = await call(t, SUPERADMIN, "PUT", `/tenants/${catalog.tenant}`, { tenant: { name: catalog.tenant, workers: 0 } });
  if (workers.status !== 200) throw new Error(`workers 0: HTTP ${workers.status} ${workers.text}`);
  return { catalog, clusterId };
}

const tombstoneOf = async (t: T, tenant: string) =>
  (await readValue<TenantRecordHead>(await openBucket(t.context.sys.nc, buckets.tenants), kvKey(tenant)))?.value.deleting;

/** The same name created again answers 200 and sees nothing of the old tenant. */
async function nameIsFreshAgain(t: T, catalog: ClusterCatalog, clusterId: string): Promise<void> {
  const { sys } = t.context;
  t.deepEqual(await tenantLeftovers(sys.nc, catalog.tenant, [clusterId], sys.redis?.url), NO_LEFTOVERS, "nothing of the old tenant is stored");
  assertOk(t, await call(t, SUPERADMIN, "POST", "/tenants", { tenant: { name: catalog.tenant, workers: 0 } }), "create the name again");
  t.deepEqual((await call(t, catalog.admin, "GET", "/clusters")).body, [], "no clusters");
  assertError(t, await call(t, catalog.admin, "GET", `/clusters/${clusterId}`), 404, "the old cluster");
  t.deepEqual((await pluginClient(sys.baseUrl, catalog.admin).call("GET", "/plugins/automatortypes/shell/scripts")).body, {}, "no plugin resources");
  t.deepEqual((await call(t, catalog.admin, "GET", "/export")).body, { providers: [], hardwaretypes: [], imagetypes: [], services: [], clustertemplates: [] });
}

test.serial("tenant delete - tenancy killed in the middle of the purge: a restarted tenancy finishes it", async (t) => {
  const { sys } = t.context;
  const { catalog, clusterId } = await usedTenant(t);

  // The purge's first step is a request to the clusters service: tenancy dies the moment it is sent.
  let killed: Promise<unknown> | undefined;
  const watch = sys.nc.subscribe(subjects.clusters.purgeTenant, {
    callback: (_err, msg) => {
      if ((decode(msg.data) as { tenant?: string }).tenant === catalog.tenant) killed ??= t.context.tenancy.kill("SIGKILL");
    },
  });
  t.teardown(() => watch.unsubscribe());
  const deleted = await call(t, SUPERADMIN, "DELETE", `/tenants/${catalog.tenant}`);
  t.true(killed !== undefined, `tenancy was killed during the purge (the delete answered ${deleted.status} ${deleted.text})`);
  await killed;

  const tombstone = await tombstoneOf(t, catalog.tenant);
  t.like(tombstone, { committed: true }, "the deletion was decided and is left half-done");
  t.not((await tenantLeftovers(sys.nc, catalog.tenant, [clusterId])).catalog, 0, "the catalog (purged last) is still there");

  t.context.tenancy = t.context.procs.add(await t.context.tenancy.respawn());
  await eventually(async () => (await tombstoneOf(t, catalog.tenant)) === undefined && !(await tenantLeftovers(sys.nc, catalog.tenant, [])).tenantRecord, {
    what: "the restarted tenancy to finish the deletion",
    timeoutMs: 40_000,
  });
  await nameIsFreshAgain(t, catalog, clusterId);
});

test.serial("tenant delete - the clusters service dead during a delete: the name stays taken until it is back and the purge is done", async (t) => {
  const { sys } = t.context;
  const { catalog, clusterId } = await usedTenant(t);
  await t.context.clusters.kill("SIGKILL");

  assertOk(t, await call(t, SUPERADMIN, "DELETE", `/tenants/${catalog.tenant}`), "delete (decided; the purge waits for the clusters service)");
  assertError(t, await call(t, SUPERADMIN, "GET", `/tenants/${catalog.tenant}`), 404, "the tenant is gone for everyone");
  assertError(t, await call(t, catalog.admin, "GET", "/providers"), 401, "its users are refused");
  const early = await call(t, SUPERADMIN, "POST", "/tenants", { tenant: { name: catalog.tenant, workers: 0 } });
  assertError(t, early, 409, "the name while its clusters are not purged");
  t.like(early.body, { error: "still_deleting" });
  t.regex((early.body as { message: string }).message, /still being deleted.*clusters: no service answers/);
  t.is((await tenantLeftovers(sys.nc, catalog.tenant, [clusterId])).clusters.length, 1, "the old cluster record is still there");

  t.context.clusters = t.context.procs.add(await t.context.clusters.respawn());
  await eventually(async () => !(await tenantLeftovers(sys.nc, catalog.tenant, [])).tenantRecord, {
    what: "the sweep to finish the deletion",
    timeoutMs: 40_000,
  });
  await nameIsFreshAgain(t, catalog, clusterId);
});
