import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import anyTest, { type TestFn } from "ava";
import {
  createChefSoloAutomator,
  createShellAutomator,
  createSimProvider,
  nodeDir,
  resourceDir,
  pathSegment,
} from "@corral/provisioner";
import { nameOfSegment } from "@corral/provisioner/testing";
import { taskMessage } from "./helpers.js";
import { pluginContext } from "./helpers/plugin-context.js";

/** Plugins called directly, without NATS. */
const test = anyTest as TestFn<{ dir: string }>;

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-prov-plugins-"));
});
test.after.always(async (t) => {
  await rm(t.context.dir, { recursive: true, force: true });
});

test("paths - names become single, safe path segments", (t) => {
  t.is(pathSegment("acme"), "acme");
  t.is(pathSegment("my_tenant.v2"), "my_tenant.v2");
  t.is(pathSegment(".."), "_2E_2E");
  t.is(pathSegment("a/b"), "a_2Fb");
  t.is(pathSegment(".hidden"), "_2Ehidden");
  t.is(nodeDir("/w", "t", "../x", "n"), "/w/t/nodes/_2E_2E_2Fx/n");
  // Tenants ".x" and "_2Ex" must not share a directory (nor a sandbox uid): a leading "_" is escaped too.
  t.not(pathSegment("_2Ex"), pathSegment(".x"));
  t.is(pathSegment("_x"), "_5Fx");
  for (const name of ["acme", "my_tenant.v2", ".x", "_2Ex", "_", "-a_b.c"]) t.is(nameOfSegment(pathSegment(name)), name);
});

test("sim - addresses of 10,000 confirmed nodes are all distinct", async (t) => {
  const sim = createSimProvider();
  const seen = new Set<string>();
  for (let i = 0; i < 10_000; i++) {
    const out = await sim.confirm(pluginContext(taskMessage({ tenant: "t", taskName: "CONFIRM" }), { workDir: t.context.dir }));
    seen.add(out.ipaddresses!["access_v4"]!).add(out.ipaddresses!["bind_v4"]!);
  }
  t.is(seen.size, 20_000);
});

test("sim - a delay stops when the task is aborted", async (t) => {
  const sim = createSimProvider();
  const abort = new AbortController();
  const task = taskMessage({ tenant: "t", config: { provider: { name: "p", providertype: "sim", provisioner: { delay_ms: 60_000 } } } });
  const running = sim.create(pluginContext(task, { workDir: t.context.dir, signal: abort.signal }));
  abort.abort(new Error("stop"));
  await t.throwsAsync(running, { message: "stop" });
});

test("shell - an abort kills the action's process group", async (t) => {
  const shell = createShellAutomator();
  const abort = new AbortController();
  const task = taskMessage({ tenant: "t", taskName: "START" });
  const running = shell.runAction(pluginContext(task, { workDir: t.context.dir, signal: abort.signal }), {
    name: "START",
    service: "s",
    fields: { script: "sleep 30" },
  });
  setTimeout(() => abort.abort(), 200);
  const started = Date.now();
  const out = await running;
  t.is(out.status, 1);
  t.true(Date.now() - started < 5_000);
});

test("chef-solo - without chef-solo on the PATH every task fails clearly", async (t) => {
  const chef = createChefSoloAutomator({ pathEnv: "/nonexistent" });
  const task = taskMessage({ tenant: "t", taskName: "INSTALL" });
  const boot = await chef.bootstrap(pluginContext(task, { workDir: t.context.dir }));
  t.deepEqual(boot, { status: 1, stderr: "chef-solo is not available on this provisioner" });
  const action = await chef.runAction(pluginContext(task, { workDir: t.context.dir }), { name: "INSTALL", service: "s", fields: { run_list: "recipe[x]" } });
  t.is(action.status, 1);
  t.is(action.stderr, "chef-solo is not available on this provisioner");
});

test("chef-solo - with chef-solo on the PATH an action runs it with the run-list and attributes", async (t) => {
  // Outside the work directory (which the sandbox hides) and searchable by the tenant's sandbox user.
  const bin = await mkdtemp(join(tmpdir(), "corral-prov-chef-bin-"));
  t.teardown(() => rm(bin, { recursive: true, force: true }));
  await chmod(bin, 0o755);
  const fake = join(bin, "chef-solo");
  // Records its arguments, its config file and the attributes (-c <config> -j <json> -o <run_list>).
  await writeFile(fake, '#!/bin/sh\necho "args: $*"\ncp "$3" solo.rb\ncp "$5" attributes.json\n');
  await chmod(fake, 0o755);
  const chef = createChefSoloAutomator({ pathEnv: `${bin}:${process.env["PATH"] ?? ""}` });
  const task = taskMessage({
    tenant: "t",
    taskName: "CONFIGURE",
    config: { hostname: "h.local", services: ["s"], cluster: { a: 1 } },
  });
  t.is((await chef.bootstrap(pluginContext(task, { workDir: t.context.dir }))).status, 0);
  const out = await chef.runAction(pluginContext(task, { workDir: t.context.dir }), {
    name: "CONFIGURE",
    service: "s",
    fields: { run_list: "recipe[a], recipe[b]", json_attributes: '{"b": 2}' },
  });
  t.is(out.status, 0, out.stderr);
  t.regex(out.stdout!, /^args: --no-color -c .*chef-.*\.rb -j .*chef-.*\.json -o recipe\[a\],recipe\[b\]\n$/);
  const node = nodeDir(t.context.dir, "t", task.clusterId, task.nodeId);
  const attributes = JSON.parse(await readFile(join(node, "attributes.json"), "utf8"));
  t.like(attributes, { a: 1, b: 2, coopr: { hostname: "h.local", services: ["s"], clusterId: task.clusterId } });
  // chef-solo uses the tenant's synced cookbooks, data bags and roles.
  const synced = (type: string) => resourceDir(t.context.dir, "t", "automatortypes", "chef-solo", type);
  t.is(
    await readFile(join(node, "solo.rb"), "utf8"),
    [
      `cookbook_path ['${synced("cookbooks")}']`,
      `data_bag_path '${synced("data_bags")}'`,
      `role_path '${synced("roles")}'`,
      `file_cache_path '${join(node, "chef-cache")}'`,
      "",
    ].join("\n"),
  );
  t.deepEqual((await readdir(node)).filter((f) => /^chef-.*\.(rb|json)$/.test(f)), [], "the run's config and attributes are removed after it");
});
