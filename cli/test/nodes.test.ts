/**
 * `corral clusters nodes add|remove|replace` through the real binary against a running Corral (`sim`, health checked
 * every 300 ms): each dry run shows only the nodes that change and the plan, and changes nothing; --wait follows the
 * plan to its end; a refused removal prints the server's reason and exits 3; `clusters nodes` and `status` show the
 * nodes' health; --rolling restarts in batches no larger than asked, here and on the derived services restart.
 */
import anyTest, { type TestFn } from "ava";
import type { ClusterDetails, DryRunResult } from "@corral/contracts";
import { createActiveCluster, createWorkerTenant, getOk, importSimCatalog, type E2eTenant } from "../../test/helpers/clusters.js";
import { eventually } from "../../test/helpers/eventually.js";
import { startSystem, type TestSystem } from "../../test/helpers/system.js";
import { bundledCorral, corralEnv, runCorral, scratchDir, shown, type CorralRun } from "./helpers/run-corral.js";

interface Context {
  sys: TestSystem;
  scratch: Awaited<ReturnType<typeof scratchDir>>;
  tenant: E2eTenant;
}
const test = anyTest as TestFn<Context>;

/** Every node's config lists the hosts with `base` (all of a webapp's): adding or removing a node changes every peer's. */
const PEERS_CONFIG = { peers: "%join(host.service.base,',')%" };

test.before(async (t) => {
  const sys = await startSystem({ clusters: 1, provisioners: 1, healthIntervalMs: 300 });
  t.context.sys = sys;
  t.context.scratch = await scratchDir();
  t.context.tenant = await createWorkerTenant(sys.baseUrl, sys.nc, "clinodes", { workers: 4 });
  await importSimCatalog(sys.baseUrl, t.context.tenant.admin, { providerFields: { health_check: "true" } });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  await t.context.scratch?.remove();
});

const corral = async (t: { context: Context }, args: string[]): Promise<CorralRun> =>
  runCorral(args, { env: corralEnv(t.context.sys.baseUrl, t.context.tenant.user, t.context.scratch.profile), script: await bundledCorral() });
const details = (t: { context: Context }, id: string) => getOk<ClusterDetails>(t.context.sys.baseUrl, t.context.tenant.user, `/clusters/${id}`);
const webapp = (t: { context: Context }, name: string) =>
  createActiveCluster(t.context.sys.baseUrl, t.context.tenant.user, { name, clusterTemplate: "webapp", numMachines: 3, config: PEERS_CONFIG });
const activeLine = (id: string, action: string) => new RegExp(`^cluster ${id} is active \\(${action} complete, (\\d+)/\\1 tasks\\)$`, "m");

test("usage: add needs --count, --rolling a whole number above 0, remove a node; nothing is sent", async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [["clusters", "nodes", "add", "1"], /needs --count <n>/],
    [["clusters", "nodes", "add", "1", "--count", "0"], /--count 0: must be a whole number above 0/],
    [["clusters", "nodes", "add", "1", "--count", "2", "--rolling", "x"], /--rolling x: must be a whole number above 0/],
    [["clusters", "nodes", "remove", "1"], /takes at least 2 arguments/],
    [["clusters", "nodes", "replace", "1", "2", "3"], /takes 2 arguments/],
  ];
  for (const [args, message] of cases) {
    const run = await corral(t, args);
    t.is(run.code, 2, shown(run));
    t.regex(run.stderr, message);
  }
});

test("add: the dry run shows the two new nodes and the plan and adds nothing; --wait follows it; nodes and status show health", async (t) => {
  const id = await webapp(t, "grow");
  const dry = await corral(t, ["clusters", "nodes", "add", id, "--count", "2", "--dry-run"]);
  t.is(dry.code, 0, shown(dry));
  t.regex(dry.stdout, new RegExp(`^dry run for cluster ${id}: nothing was changed\nlayout: 3 -> 5 nodes \\(2 added, 0 removed, 0 changed, 3 unchanged\\)$`, "m"));
  t.regex(dry.stdout, /^CHANGE +NODE +HOSTNAME +HARDWARE +IMAGE +SERVICES$/m);
  t.is(dry.stdout.match(/^\+ +\S+/gm)?.length, 2, "two rows, both added");
  t.regex(dry.stdout, /^plan ADD_NODES: \d+ stages, \d+ tasks$/m);
  t.is((await details(t, id)).nodes.length, 3, "the dry run added nothing");

  const json = JSON.parse((await corral(t, ["clusters", "nodes", "add", id, "--count", "2", "--dry-run", "-o", "json"])).stdout) as DryRunResult;
  t.like(json, { dryRun: true, clusterId: id, plan: { action: "ADD_NODES" } });
  t.is(json.layout.nodes.length, 5);

  const added = await corral(t, ["clusters", "nodes", "add", id, "--count", "2", "--wait"]);
  t.is(added.code, 0, shown(added));
  t.regex(added.stdout, /^plan \S+ ADD_NODES: \d+ stages, \d+ tasks$/m);
  t.regex(added.stdout, activeLine(id, "add_nodes"));
  t.is((await details(t, id)).nodes.length, 5);

  const nodes = await eventually(
    async () => {
      const run = await corral(t, ["clusters", "nodes", id]);
      const rows = run.stdout.trim().split("\n").slice(1);
      return rows.length === 5 && rows.every((r) => / healthy +\d{4}-\d\d-\d\dT/.test(r)) ? run : false;
    },
    { what: "the five nodes healthy in corral clusters nodes", timeoutMs: 20_000 },
  );
  t.regex(nodes.stdout, /^NODE +HOSTNAME +IP +SERVICES +HEALTH +SINCE +LAST ACTION$/m);
  t.false(/MESSAGE/.test(nodes.stdout), "no MESSAGE column while every node is healthy");

  const status = await corral(t, ["status"]);
  t.is(status.code, 0, shown(status));
  t.regex(status.stdout, /^ID +NAME +TEMPLATE +STATUS +NODES +HEALTH +PROGRESS +OWNER +EXPIRES$/m);
  t.regex(status.stdout, new RegExp(`^${id} +grow +webapp +active +5 +5 healthy +add_nodes complete`, "m"));
  const statusJson = JSON.parse((await corral(t, ["status", "-o", "json"])).stdout) as Array<{ id: string; health?: Record<string, number> }>;
  t.deepEqual(statusJson.find((c) => c.id === id)?.health, { healthy: 5 });
  const brief = await corral(t, ["status", "--no-health"]);
  t.regex(brief.stdout, /^ID +NAME +TEMPLATE +STATUS +NODES +PROGRESS +OWNER +EXPIRES$/m);
});

test("remove: the dry run shows the leaving nodes; --wait removes them; removing the only database is refused with the reason", async (t) => {
  const id = await webapp(t, "shrink");
  const grown = await corral(t, ["clusters", "nodes", "add", id, "--count", "2", "--wait"]);
  t.is(grown.code, 0, shown(grown));
  const nodes = (await details(t, id)).nodes;
  const leaving = nodes.filter((n) => !n.services.includes("postgresql")).slice(-2).map((n) => n.id);

  const dry = await corral(t, ["clusters", "nodes", "remove", id, ...leaving, "--dry-run"]);
  t.is(dry.code, 0, shown(dry));
  t.regex(dry.stdout, /^layout: 5 -> 3 nodes \(0 added, 2 removed, 0 changed, 3 unchanged\)$/m);
  for (const node of leaving) t.regex(dry.stdout, new RegExp(`^- +${node} `, "m"));
  t.regex(dry.stdout, /^plan REMOVE_NODES: \d+ stages, \d+ tasks$/m);
  t.regex(dry.stdout, /DELETE on /);
  t.is((await details(t, id)).nodes.length, 5, "the dry run removed nothing");

  const removed = await corral(t, ["clusters", "nodes", "remove", id, ...leaving, "--wait"]);
  t.is(removed.code, 0, shown(removed));
  t.regex(removed.stdout, activeLine(id, "remove_nodes"));
  t.deepEqual((await details(t, id)).nodes.map((n) => n.id), nodes.map((n) => n.id).filter((n) => !leaving.includes(n)));

  const database = nodes.find((n) => n.services.includes("postgresql"))!;
  const refused = await corral(t, ["clusters", "nodes", "remove", id, database.id]);
  t.is(refused.code, 3, shown(refused));
  t.regex(refused.stderr, /node-app requires sql-database.*\(HTTP 409 /);
  t.is((await details(t, id)).nodes.length, 3, "nothing removed");
});

test("replace: the dry run shows one node out and one in; --wait replaces the machine, services kept", async (t) => {
  const id = await webapp(t, "replace");
  const before = (await details(t, id)).nodes;
  const old = before.find((n) => n.services.includes("postgresql"))!;
  const dry = await corral(t, ["clusters", "nodes", "replace", id, old.id, "--dry-run"]);
  t.is(dry.code, 0, shown(dry));
  t.regex(dry.stdout, /^plan REPLACE_NODE: \d+ stages, \d+ tasks$/m);
  t.regex(dry.stdout, /^layout: 3 -> 3 nodes \(1 added, 1 removed, 0 changed, 2 unchanged\)$/m);

  const replaced = await corral(t, ["clusters", "nodes", "replace", id, old.id, "--wait"]);
  t.is(replaced.code, 0, shown(replaced));
  t.regex(replaced.stdout, activeLine(id, "replace_node"));
  const after = (await details(t, id)).nodes;
  t.is(after.length, 3);
  t.false(after.some((n) => n.id === old.id), "the old node is gone");
  t.deepEqual(after.find((n) => !before.some((b) => b.id === n.id))?.services.sort(), [...old.services].sort(), "the new node has its services");
});

test("--rolling 1: the dry run's restart stops one node of a service at a time", async (t) => {
  const id = await webapp(t, "rolling");
  const dry = await corral(t, ["clusters", "nodes", "add", id, "--count", "1", "--rolling", "1", "--dry-run", "-o", "json"]);
  t.is(dry.code, 0, shown(dry));
  const result = JSON.parse(dry.stdout) as DryRunResult;
  // nginx runs on each of the three peers, whose config the new node changes: each is stopped in a stage of its own.
  const stopsByStage = result.plan.stages.map((stage) => stage.filter((task) => task.taskName === "STOP").map((task) => task.service));
  t.is(stopsByStage.flat().filter((service) => service === "nginx").length, 3, JSON.stringify(stopsByStage));
  for (const stops of stopsByStage) t.is(new Set(stops).size, stops.length, `at most one node of a service down at a time: ${JSON.stringify(stopsByStage)}`);
  const table = await corral(t, ["clusters", "nodes", "add", id, "--count", "1", "--rolling", "1", "--dry-run"]);
  t.regex(table.stdout, /^stage \d+: STOP nginx on \S+$/m);
});

test("services restart --rolling 1: the derived command takes the bare number; one node of a service down at a time", async (t) => {
  const id = await webapp(t, "restart");
  const dry = await corral(t, ["clusters", "services", "restart", id, "--rolling", "1", "--dry-run", "-o", "json"]);
  t.is(dry.code, 0, shown(dry));
  const result = JSON.parse(dry.stdout) as DryRunResult;
  t.is(result.plan.action, "RESTART_SERVICES");
  const stopsByStage = result.plan.stages.map((stage) => stage.filter((task) => task.taskName === "STOP").map((task) => task.service));
  t.is(stopsByStage.flat().filter((service) => service === "nginx").length, 3, JSON.stringify(stopsByStage));
  for (const stops of stopsByStage) t.is(new Set(stops).size, stops.length, `at most one node of a service down at a time: ${JSON.stringify(stopsByStage)}`);
  const restarted = await corral(t, ["clusters", "services", "restart", id, "nginx", "--rolling", "1", "--wait"]);
  t.is(restarted.code, 0, shown(restarted));
  t.regex(restarted.stdout, activeLine(id, "restart_services"));
});
