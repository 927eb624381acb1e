/**
 * A crash between the two writes that end a job: the plan is stored as finished, the cluster still says pending
 * (the clusters service died before telling the cluster actor). Simulated by killing the clusters process and
 * writing the cluster's previous stored version back (the bucket keeps history), and for a delete also the tenant
 * usage the lost write would have released. A new clusters process must repair it through its reconciler alone:
 * the cluster settles, usage is right, and nothing is dispatched again.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { jetstreamManager } from "@nats-io/jetstream";
import { buckets, encode, kvKey, streams } from "@corral/contracts";
import { openBucket, readValue } from "@corral/shared";
import { eventually } from "../helpers/eventually.js";
import { createCluster, createClusterCatalog, waitForStatus, type ClusterCatalog } from "../helpers/cluster-fixture.js";
import { clusterProblems, openClusterState, type ClusterState } from "../helpers/cluster-state.js";
import { createProcessSet, startClustersProcess, type ProcessSet, type ServiceProcess } from "../helpers/processes.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

interface Context {
  sys: TestSystem;
  procs: ProcessSet;
  clusters: ServiceProcess;
  catalog: ClusterCatalog;
  state: ClusterState;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const sys = (t.context.sys = await startSystem({ provisioners: 1 }));
  t.context.procs = createProcessSet();
  t.context.clusters = await t.context.procs.start(() => startClustersProcess({ natsUrl: sys.nats.url }));
  t.context.catalog = await createClusterCatalog(sys.baseUrl, {
    workers: 4,
    services: [{ name: "base", actions: { install: "true", start: "true", stop: "true" } }],
  });
  t.context.state = await openClusterState(sys.nc);
});

test.after.always(async (t) => {
  await t.context.procs?.stopAll();
  await t.context.sys?.stop();
});

interface Usage {
  clusters: number;
  nodes: number;
}

/**
 * Kills the clusters service, rolls the cluster record back to its last pending version of the current plan (the
 * write that ended the job is lost), lets `also` change more state, and starts a new clusters process.
 */
async function crashBeforeTellingTheCluster(t: ExecutionContext<Context>, id: string, also?: () => Promise<void>) {
  const { state } = t.context;
  t.is((await t.context.clusters.kill("SIGKILL")).signal, "SIGKILL");
  const current = await state.cluster(id);
  if (!current) throw new Error(`cluster ${id} missing`);
  const planId = current.value.actor.context.planId;
  const pending = (await state.clusterHistory(id))
    .filter((v) => v.value.actor.value === "pending" && v.value.actor.context.planId === planId)
    .pop();
  if (!pending) throw new Error(`no pending version of cluster ${id} for ${planId} in the history`);
  await state.kv.clusters.update(kvKey(id), encode(pending.value), current.revision);
  const plan = (await state.plan(id, planId))?.value;
  t.is(plan?.actor.value, "succeeded", "the plan is finished");
  t.is((await state.cluster(id))?.value.actor.value, "pending", "the cluster was not told");
  await also?.();
  t.context.clusters = await t.context.procs.start(() => t.context.clusters.respawn());
}

/** Last sequence of the task stream: unchanged means nothing was dispatched. */
async function tasksPublished(t: ExecutionContext<Context>): Promise<number> {
  return (await (await jetstreamManager(t.context.sys.nc)).streams.info(streams.tasks)).state.last_seq;
}

test.serial("reconciler - a create plan that succeeded while its cluster stayed pending: the cluster becomes active", async (t) => {
  t.timeout(60_000);
  const { sys, catalog, state } = t.context;
  const usage = await openBucket(sys.nc, buckets.usage);
  const id = await createCluster(sys.baseUrl, catalog, 2);
  await waitForStatus(sys.baseUrl, catalog, id, "active", 20_000);
  const planRevision = (await state.plan(id, `${id}-001`))?.revision;

  await crashBeforeTellingTheCluster(t, id);
  const published = await tasksPublished(t);
  await waitForStatus(sys.baseUrl, catalog, id, "active", 30_000);
  t.deepEqual(await clusterProblems(state, id, "active"), []);
  t.is((await state.plan(id, `${id}-001`))?.revision, planRevision, "the plan was not touched");
  t.is(await tasksPublished(t), published, "nothing was dispatched again");
  t.deepEqual((await readValue<Usage>(usage, kvKey(catalog.tenant)))?.value, { clusters: 1, nodes: 2 });
});

test.serial("reconciler - a delete plan that succeeded while its cluster stayed pending: terminated, usage released once", async (t) => {
  t.timeout(60_000);
  const { sys, catalog, state } = t.context;
  const usage = await openBucket(sys.nc, buckets.usage);
  const id = await createCluster(sys.baseUrl, catalog, 3);
  await waitForStatus(sys.baseUrl, catalog, id, "active", 20_000);
  const withCluster = (await readValue<Usage>(usage, kvKey(catalog.tenant)))?.value;
  t.truthy(withCluster);
  const deleted = await fetch(`${sys.baseUrl}/clusters/${id}`, {
    method: "DELETE",
    headers: { "Service-UserID": "admin", "Service-TenantID": catalog.tenant },
  });
  t.is(deleted.status, 200);
  await waitForStatus(sys.baseUrl, catalog, id, "terminated", 20_000);

  await crashBeforeTellingTheCluster(t, id, async () => {
    // The lost write also lost the release of the cluster's nodes, which follows it.
    await usage.put(kvKey(catalog.tenant), encode(withCluster));
  });
  const published = await tasksPublished(t);
  await waitForStatus(sys.baseUrl, catalog, id, "terminated", 30_000);
  t.deepEqual(await clusterProblems(state, id, "terminated"), []);
  t.true((await state.cluster(id))?.value.released);
  await eventually(
    async () => {
      const u = (await readValue<Usage>(usage, kvKey(catalog.tenant)))?.value;
      return u?.clusters === (withCluster?.clusters ?? 0) - 1 && u.nodes === (withCluster?.nodes ?? 0) - 3;
    },
    { what: "the cluster's nodes released from the tenant usage", timeoutMs: 5_000 },
  );
  t.is(await tasksPublished(t), published, "nothing was dispatched again");
});
