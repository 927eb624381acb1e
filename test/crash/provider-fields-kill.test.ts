/**
 * Provider fields given with a request live as long as their plan, crash or not: the clusters service (a child
 * process) is killed with SIGKILL in the middle of a create whose provider fields every task needs, then started
 * again. The resumed plan's tasks still get the fields (each action fails without them), and once the plan ended
 * nothing stored in JetStream holds them.
 */
import anyTest, { type TestFn } from "ava";
import { buckets } from "@corral/contracts";
import { listKeys, openBucket } from "@corral/shared";
import { eventually } from "../helpers/eventually.js";
import { createClusterCatalog, waitForStatus } from "../helpers/cluster-fixture.js";
import { createCluster } from "../helpers/clusters.js";
import { openClusterState } from "../helpers/cluster-state.js";
import { createProcessSet, startClustersProcess, type ProcessSet } from "../helpers/processes.js";
import { storedMessagesContaining } from "../helpers/stored-bytes.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

const test = anyTest as TestFn<{ sys: TestSystem; procs: ProcessSet }>;

test.before(async (t) => {
  t.context.sys = await startSystem({ requestTimeoutMs: 5_000, provisioners: 1, simSecured: true });
  t.context.procs = createProcessSet();
});

test.after.always(async (t) => {
  await t.context.procs?.stopAll();
  await t.context.sys?.stop();
});

const [HEAD, TAIL] = ["crash-Secret", "-9001"];
const SECRET = HEAD + TAIL;
/**
 * Every action fails unless its task carries the password the create was given. The script holds the value in
 * two pieces that the shell joins: the service definition (stored in the catalog and the cluster) does not hold it.
 */
const NEEDS_SECRET = `grep -q "\\"sim_password\\":\\"${HEAD}""${TAIL}\\"" "$CORRAL_TASK_FILE" && sleep 0.2`;

test("crash - clusters process killed mid-create: the resumed plan's tasks still get the request's provider fields; afterwards none are kept", async (t) => {
  t.timeout(120_000);
  const { sys, procs } = t.context;
  const victim = await procs.start(() => startClustersProcess({ natsUrl: sys.nats.url, name: "clusters-a" }));
  const catalog = await createClusterCatalog(sys.baseUrl, {
    workers: 4,
    providerType: "sim-secured",
    sim: { delay_ms: "150" },
    services: [{ name: "base", actions: { install: NEEDS_SECRET, configure: NEEDS_SECRET, start: NEEDS_SECRET } }],
  });
  const id = await createCluster(sys.baseUrl, catalog.admin, {
    name: "kept-while-running",
    clusterTemplate: catalog.template,
    numMachines: 3,
    providerFields: { sim_password: SECRET },
  });
  const planId = `${id}-001`;
  const fields = await openBucket(sys.nc, buckets.credentials);
  const state = await openClusterState(sys.nc);
  const completed = async () => (await state.plan(id, planId))?.value.actor.context.completed ?? 0;
  // 3 nodes x (CREATE, CONFIRM, BOOTSTRAP, INSTALL, CONFIGURE, START) = 18 tasks.
  const atKill = await eventually(async () => ((await completed()) >= 5 ? completed() : false), { what: "the create under way", timeoutMs: 30_000, intervalMs: 20 });
  t.true(atKill < 18, `killed mid-plan (${atKill} of 18 tasks done)`);
  t.true((await listKeys(fields)).some((key) => key.startsWith(`${id}.`)), "the running plan's fields are stored");
  t.is((await victim.kill("SIGKILL")).signal, "SIGKILL");

  await procs.start(() => victim.respawn());
  await waitForStatus(sys.baseUrl, catalog, id, "active", 90_000);
  t.is(await completed(), 18, "every task succeeded, those after the restart with the fields too");
  t.false((await listKeys(fields)).some((key) => key.startsWith(`${id}.`)), "the fields are gone with the plan");
  const leftovers = () => storedMessagesContaining(sys.nc, SECRET);
  await eventually(async () => (await leftovers()).length === 0, { what: "nothing stored holds the fields", timeoutMs: 20_000 }).catch(() => {});
  t.deepEqual(await leftovers(), [], "nothing stored in JetStream holds the fields");
});
