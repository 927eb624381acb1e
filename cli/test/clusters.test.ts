/**
 * Clusters through the real `corral` binary against a running Corral with the `sim` provisioner: a create with
 * --wait draws its progress from the cluster's event stream and exits 0, `status` and `plan` show the cluster (table, json, yaml), a failing
 * create exits 1 with the failing task's output, `watch` of a finished job says how it ended.
 */
import anyTest, { type TestFn } from "ava";
import { parse as parseYaml } from "yaml";
import { createWorkerTenant, importSimCatalog, type E2eTenant } from "../../test/helpers/clusters.js";
import { startSystem, type TestSystem } from "../../test/helpers/system.js";
import { bundledCorral, corralEnv, runCorral, scratchDir, shown, type CorralRun } from "./helpers/run-corral.js";

interface Context {
  sys: TestSystem;
  scratch: Awaited<ReturnType<typeof scratchDir>>;
  healthy: E2eTenant;
  failing: E2eTenant;
}
const test = anyTest as TestFn<Context>;

/** postgresql's install writes to both streams and fails, every attempt. */
const FAILING_INSTALL = { script: "sh", args: "-c 'echo installing postgresql; echo disk full on /var/lib/postgresql >&2; exit 3'" };

test.before(async (t) => {
  const sys = await startSystem({ clusters: 1, provisioners: 1 });
  t.context.sys = sys;
  t.context.scratch = await scratchDir();
  t.context.healthy = await createWorkerTenant(sys.baseUrl, sys.nc, "clihealthy", { workers: 3 });
  await importSimCatalog(sys.baseUrl, t.context.healthy.admin);
  t.context.failing = await createWorkerTenant(sys.baseUrl, sys.nc, "clifailing", { workers: 3 });
  await importSimCatalog(sys.baseUrl, t.context.failing.admin, { scripts: { postgresql: { install: FAILING_INSTALL } } });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  await t.context.scratch?.remove();
});

const corralAs = (t: { context: Context }, tenant: E2eTenant) => async (args: string[]) =>
  runCorral(args, { env: corralEnv(t.context.sys.baseUrl, tenant.user, t.context.scratch.profile), script: await bundledCorral() });

const idOf = (run: CorralRun): string => {
  const id = /^cluster (\S+): /m.exec(run.stdout)?.[1];
  if (id === undefined) throw new Error(`no cluster id in the output\n${shown(run)}`);
  return id;
};

test("cluster create --wait draws stages and tasks until active, exit 0; status and plan show it as table, json and yaml", async (t) => {
  const corral = corralAs(t, t.context.healthy);
  const created = await corral(["cluster", "create", "--name", "web", "--cluster-template", "webapp", "--num-machines", "2", "--wait"]);
  t.is(created.code, 0, shown(created));
  const id = idOf(created);
  const lines = created.stdout.trim().split("\n");
  t.regex(created.stdout, /^plan \S+ CLUSTER_CREATE: \d+ stages, \d+ tasks$/m);
  t.regex(created.stdout, /^stage 1\/\d+ started: CREATE x2$/m);
  t.regex(created.stdout, /^ {2}\[\d+\/\d+\] complete +INSTALL postgresql on \S+ \(\d+(ms|\.\ds)\)$/m);
  t.regex(lines.at(-1) ?? "", new RegExp(`^cluster ${id} is active \\(cluster_create complete, (\\d+)/\\1 tasks\\)$`));
  t.false(/\u001b\[/.test(created.stdout), "no escape sequences without a terminal");

  const table = await corral(["status"]);
  t.is(table.code, 0, shown(table));
  const [header, ...rows] = table.stdout.trim().split("\n");
  // Other tests of this file create clusters of the same user at the same time: find this one's row.
  const row = rows.find((r) => r.startsWith(`${id} `));
  t.regex(header ?? "", /^ID +NAME +TEMPLATE +STATUS +NODES +PROGRESS +OWNER +EXPIRES$/);
  t.regex(row ?? "", new RegExp(`^${id} +web +webapp +active +2 +cluster_create complete (\\d+)/\\1 +alice +never$`));

  const json = await corral(["status", "-o", "json"]);
  const thisCluster = (clusters: Array<{ id: string }>) => clusters.find((c) => c.id === id);
  t.like(thisCluster(JSON.parse(json.stdout)), { id, name: "web", status: "active", numNodes: 2, clusterTemplate: { name: "webapp" } });
  const yaml = await corral(["status", "-o", "yaml"]);
  t.is(yaml.code, 0, shown(yaml));
  t.deepEqual(thisCluster(parseYaml(yaml.stdout)), thisCluster(JSON.parse(json.stdout)), "the yaml says what the json says");

  const plan = await corral(["plan", id]);
  t.is(plan.code, 0, shown(plan));
  t.regex(plan.stdout, new RegExp(`^plan \\S+ of cluster ${id}: CLUSTER_CREATE succeeded, (\\d+)/\\1 tasks`));
  t.regex(plan.stdout, /^STAGE +TASK +SERVICE +NODE +STATE +ATTEMPTS +DURATION$/m);
  t.regex(plan.stdout, /^1\/\d+ +CREATE +\S+ +complete +1 +\d+(ms|\.\ds)$/m);
  const planJson = JSON.parse((await corral(["plan", id, "-o", "json"])).stdout);
  const tasks = planJson.stages.flatMap((s: { tasks: unknown[] }) => s.tasks);
  t.true(tasks.length > 0 && tasks.every((task: { state: string }) => task.state === "complete"));
  t.is(planJson.done, planJson.total);

  const removed = await corral(["cluster", "delete", id, "--wait"]);
  t.is(removed.code, 0, shown(removed));
  t.regex(removed.stdout, new RegExp(`^cluster ${id} is terminated \\(cluster_delete complete`, "m"));
});

test("a failing create exits 1 with the failing task and its output; watch of the failed job says the same", async (t) => {
  const corral = corralAs(t, t.context.failing);
  const created = await corral(["cluster", "create", "--name", "db", "--cluster-template", "webapp", "--num-machines", "1", "--wait"]);
  t.is(created.code, 1, shown(created));
  const id = idOf(created);
  t.regex(created.stdout, /^failed tasks:\n {2}INSTALL postgresql on \S+: failed after 3 attempts\n {4}stderr\| disk full on \/var\/lib\/postgresql\n {4}stdout\| installing postgresql$/m);
  t.regex(created.stdout.trim().split("\n").at(-1) ?? "", new RegExp(`^cluster ${id} failed: incomplete \\(cluster_create failed, stage \\d+/\\d+`));

  // The event stream shows every failed attempt as it happens, each with its output.
  t.regex(created.stdout, /^ {2}\[\d+\/\d+\] retrying INSTALL postgresql on \S+ attempt 2 \(.+\)\n {6}stderr\| disk full on \/var\/lib\/postgresql$/m);

  for (const how of [[], ["--poll"]]) {
    const watched = await corral(["watch", id, ...how]);
    t.is(watched.code, 1, shown(watched));
    t.regex(watched.stdout, /stderr\| disk full on \/var\/lib\/postgresql/);
  }

  const plan = JSON.parse((await corral(["plan", id, "-o", "json"])).stdout);
  const failed = plan.stages.flatMap((s: { tasks: any[] }) => s.tasks).filter((task: any) => task.state === "failed");
  t.like(failed, [{ taskName: "INSTALL", service: "postgresql", attempts: 3, failure: { stderr: "disk full on /var/lib/postgresql\n" } }]);

  // With -o json the progress goes to stderr and stdout is one document: the final state.
  const json = await corral(["watch", id, "-o", "json"]);
  t.is(json.code, 1);
  t.like(JSON.parse(json.stdout), { status: { clusterid: id, status: "incomplete", actionstatus: "failed" } });
  t.regex(json.stderr, /failed tasks:/);
});

test("--dry-run prints the layout and plan a create or an operation would make and creates nothing", async (t) => {
  const corral = corralAs(t, t.context.healthy);
  const create = ["cluster", "create", "--name", "preview", "--cluster-template", "webapp", "--num-machines", "2", "--dry-run"];
  const table = await corral(create);
  t.is(table.code, 0, shown(table));
  t.regex(table.stdout, /^dry run for cluster new: nothing was changed\nlayout: 2 nodes, services .*postgresql/);
  t.regex(table.stdout, /^NODE +HOSTNAME +HARDWARE +IMAGE +SERVICES$/m);
  t.regex(table.stdout, /^plan CLUSTER_CREATE: \d+ stages, \d+ tasks\nstage 1: CREATE on new-\d+, CREATE on new-\d+$/m);
  const json = JSON.parse((await corral([...create, "-o", "json"])).stdout);
  t.like(json, { dryRun: true, clusterId: "new", plan: { action: "CLUSTER_CREATE" } });
  t.is(json.layout.nodes.length, 2);
  const clusters = JSON.parse((await corral(["status", "-o", "json"])).stdout) as Array<{ name: string }>;
  t.false(clusters.some((c) => c.name === "preview"), "no cluster was created");
});

test("a refusal naming a body field names the command's option for it", async (t) => {
  const corral = corralAs(t, t.context.healthy);
  const missing = await corral(["cluster", "create", "--name", "nosize", "--cluster-template", "webapp", "--dry-run"]);
  t.is(missing.code, 3, shown(missing));
  t.regex(missing.stderr, /^corral: numMachines is required \(option --num-machines\) \(HTTP 400 bad_request\)/);
});

test("on a terminal the progress is a block redrawn in place, ending with the outcome", async (t) => {
  const { baseUrl } = t.context.sys;
  const env = { ...corralEnv(baseUrl, t.context.healthy.user, t.context.scratch.profile), TERM: "xterm" };
  const command = [process.execPath, await bundledCorral(), "cluster", "create", "--name", "tty", "--cluster-template", "webapp", "--num-machines", "1", "--wait"];
  // script(1) gives the command a pseudo-terminal, as a user's shell would.
  const run = await runCorral(["-qec", command.map((a) => `'${a}'`).join(" "), "/dev/null"], { bin: "script", env });
  t.is(run.code, 0, shown(run));
  t.regex(run.stdout, /\u001b\[\d+A\r\u001b\[J/, "the block is redrawn: cursor up, clear below");
  t.regex(run.stdout, /\[#+-*\]/, "a progress bar");
  t.regex(run.stdout, /done {5}stage 1\/\d+: CREATE x1/);
  t.regex(run.stdout, /cluster \S+ is active \(cluster_create complete, (\d+)\/\1 tasks\)/);
});
