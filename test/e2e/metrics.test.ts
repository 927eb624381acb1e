/**
 * Metrics end to end (docs/api.md, Metrics; services/metrics/README.md): real clusters on the `sim` provider are created and
 * deleted; node usage through REST equals the node-seconds of the node events the clusters service published
 * (times floored to seconds), and lies within what the wall clock allows. Queue metrics drain to zero.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { api, SUPERADMIN, type Caller } from "../helpers/api.js";
import { show } from "../helpers/assertions.js";
import { createCluster, createWorkerTenant, importSimCatalog, readNodeEvents, waitForStatus } from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { nodeLives, nodeSeconds, waitForRecordedUsage, type UsageAnswer } from "../helpers/node-usage.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 1, provisioners: 1, metrics: 1, reconcileIntervalMs: 500 });
type T = SystemTest;

async function usage(t: T, caller: Caller, query = ""): Promise<UsageAnswer> {
  const res = await api(t.context.sys.baseUrl, "GET", `/metrics/nodes/usage${query}`, caller);
  if (res.status !== 200) throw new Error(show(res));
  return res.body as UsageAnswer;
}

/** Node lifetimes in whole seconds from the published events, per owner. */
async function lifetimes(t: T, tenant: string, clusterIds: string[]) {
  const events = (await readNodeEvents(t.context.sys.nc, tenant)).map((e) => e.data);
  return nodeLives(events.filter((e) => clusterIds.includes(e.clusterId)));
}

test("e2e metrics - node usage of real clusters equals their node events' node-seconds, within wall-clock bounds", async (t) => {
  const { sys } = t.context;
  const base = sys.baseUrl;
  const tenant = await createWorkerTenant(base, sys.nc, "metrics", { workers: 4 });
  await importSimCatalog(base, tenant.admin);
  const alice = tenant.user;
  const bob = tenant.other;

  const createdFrom = Math.floor(Date.now() / 1000);
  const aliceCluster = await createCluster(base, alice, { name: "a", clusterTemplate: "webapp", numMachines: 2 });
  const bobCluster = await createCluster(base, bob, { name: "b", clusterTemplate: "webapp", numMachines: 1 });
  await waitForStatus(base, alice, aliceCluster, "active");
  await waitForStatus(base, bob, bobCluster, "active");
  const activeAt = Math.ceil(Date.now() / 1000);
  const clusters = [aliceCluster, bobCluster];

  const open = await eventually(async () => {
    const lives = await lifetimes(t, tenant.name, clusters);
    return lives.length === 3 ? lives : false;
  }, { what: "3 node.created events", timeoutMs: 10_000 });
  t.true(open.every((l) => l.created >= createdFrom && l.created <= activeAt), JSON.stringify(open));
  const first = Math.min(...open.map((l) => l.created));

  // While the nodes live, usage grows with now: the answer's own end is the service's now.
  const recorded = await waitForRecordedUsage(() => usage(t, tenant.admin), open, { what: "open nodes' usage recorded" });
  t.is(recorded.start, first, "the tenant's usage starts at its first node's creation");
  const before = await usage(t, tenant.admin);
  await sleep(2100);
  const after = await usage(t, tenant.admin);
  t.true(after.end >= before.end + 2, `${before.end} -> ${after.end}`);
  t.is(after.data[0]!.value - before.data[0]!.value, 3 * (after.end - before.end), "3 live nodes add 3 node-seconds a second");

  // Queues drain once the clusters are active.
  await eventually(async () => {
    const res = await api(base, "GET", "/metrics/queues", tenant.admin);
    return res.status === 200 && JSON.stringify(res.body) === JSON.stringify({ [tenant.name]: { inProgress: 0, queued: 0, total: 0 } });
  }, { what: "empty task queue", timeoutMs: 10_000 });

  const deleteFrom = Math.floor(Date.now() / 1000);
  for (const [caller, id] of [[alice, aliceCluster], [bob, bobCluster]] as const) {
    t.is((await api(base, "DELETE", `/clusters/${id}`, caller)).status, 200);
  }
  await waitForStatus(base, alice, aliceCluster, "terminated");
  await waitForStatus(base, bob, bobCluster, "terminated");
  const terminatedAt = Math.ceil(Date.now() / 1000);

  const closed = await eventually(async () => {
    const lives = await lifetimes(t, tenant.name, clusters);
    return lives.length === 3 && lives.every((l) => l.deleted !== undefined) ? lives : false;
  }, { what: "3 node.deleted events", timeoutMs: 10_000 });
  t.true(closed.every((l) => l.deleted! >= deleteFrom && l.deleted! <= terminatedAt), JSON.stringify(closed));
  const end = terminatedAt + 1;
  const total = nodeSeconds(closed, first, end);
  // Not "usage over [first, end] equals total": read within the second of the last deletion, that holds before the
  // deletions are recorded, and the figures read after it then grow (test/helpers/node-usage.ts).
  await waitForRecordedUsage(() => usage(t, tenant.admin), closed, { what: "deleted nodes' usage recorded" });

  // Wall clock: each node lived at least from "active" to "delete requested", at most from "create requested" to
  // "terminated" (whole seconds).
  t.true(total >= 3 * (deleteFrom - activeAt), `${total} >= 3 x ${deleteFrom - activeAt}`);
  t.true(total <= 3 * (terminatedAt - createdFrom), `${total} <= 3 x ${terminatedAt - createdFrom}`);
  t.true(total >= 3 * 2, "the nodes lived through the 2 s wait");

  const aliceLives = closed.filter((l) => l.owner === "alice");
  const bobLives = closed.filter((l) => l.owner === "bob");
  t.is(aliceLives.length, 2);
  const window = `?start=${first}&end=${end}`;
  t.deepEqual(await usage(t, tenant.admin, window), { start: first, end, data: [{ time: first, value: total }] });
  t.is((await usage(t, SUPERADMIN, window)).data[0]?.value, total, "only this tenant has nodes");
  t.is((await usage(t, SUPERADMIN, `${window}&tenant=${tenant.name}`)).data[0]?.value, total);
  // On a mismatch: every scope's figure beside the lives the expectations came from.
  const lives = `node lives ${JSON.stringify(closed)}, window [${first}, ${end}]`;
  const perUser = {
    alice: (await usage(t, alice, window)).data[0]?.value,
    bob: (await usage(t, tenant.admin, `${window}&user=bob`)).data[0]?.value,
    aliceAcrossTenants: (await usage(t, SUPERADMIN, `${window}&user=alice`)).data[0]?.value,
  };
  const seen = `${JSON.stringify(perUser)}; ${lives}`;
  t.is(perUser.alice, nodeSeconds(aliceLives, first, end), `alice: ${seen}`);
  t.is(perUser.bob, nodeSeconds(bobLives, first, end), `bob: ${seen}`);
  t.is(perUser.aliceAcrossTenants, nodeSeconds(aliceLives, first, end), `alice across tenants: ${seen}`);
  // nothing lives any more: a later window holds nothing, and the total no longer grows
  t.is((await usage(t, tenant.admin, `?start=${end}&end=${end + 1}`)).data[0]?.value, 0);
  t.is((await usage(t, tenant.admin)).data[0]?.value, total);
});
