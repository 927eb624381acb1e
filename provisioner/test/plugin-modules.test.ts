/**
 * Plugin modules (`provisioner.plugins`): what a provisioner loads besides its bundled plugins, and how a bad module
 * stops it at start with a message naming the module and nothing registered. The modules are written to a
 * temporary directory outside the repository, as a third party's would be.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { repoRoot, startNats, type NatsHandle } from "@corral/deploy";
import { buckets, kvKey, pluginTypeKey, type ProvisionerRecord } from "@corral/contracts";
import { connectNats, ensureStreams, openBucket, readValue, silentLogger } from "@corral/shared";
import { startProvisioner, type RunningProvisioner } from "@corral/provisioner";
import { eventually, uniqueName } from "./helpers.js";

interface Context {
  nats: NatsHandle;
  nc: NatsConnection;
  dir: string;
  started: RunningProvisioner[];
}
const test = anyTest as TestFn<Context>;
type Ctx = ExecutionContext<Context>;

/** What the fixture modules report back to the test: their factories' hosts and their plugins' closes. */
interface Observed {
  hosts: Record<string, { provisionerId: string; workDir: string; setting: string | undefined; hasPool: boolean; hasKeys: boolean }>;
  closed: string[];
}
const observed = (): Observed => ((globalThis as { __corralPluginModulesTest?: Observed }).__corralPluginModulesTest ??= { hosts: {}, closed: [] });

test.before(async (t) => {
  t.context.nats = await startNats({ jetstream: true, syncAlways: false });
  t.context.nc = await connectNats({ url: t.context.nats.url, name: "provisioner-plugin-modules-test" });
  await ensureStreams(t.context.nc);
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-plugin-modules-"));
  t.context.started = [];
  observed();
});

test.after.always(async (t) => {
  await Promise.all(t.context.started.map((p) => p.stop()));
  await t.context.nc?.drain();
  await t.context.nats?.stop();
  await rm(t.context.dir, { recursive: true, force: true });
});

/** Writes a module (plain ESM JavaScript) under a unique name and returns its absolute path. */
async function writeModule(t: Ctx, source: string): Promise<string> {
  const path = join(t.context.dir, `${uniqueName("plugins")}.mjs`);
  await writeFile(path, source);
  return path;
}

/** A module whose factories make providers named `names` that record their host and their close. */
const providerModule = (names: string[], exportAs: "default" | "plugins" = "default") => `
const seen = globalThis.__corralPluginModulesTest;
const provider = (name) => async (host) => {
  seen.hosts[name] = {
    provisionerId: host.provisionerId,
    workDir: host.workDir,
    setting: host.env.CORRAL_TEST_SETTING,
    hasPool: typeof host.ssh.pool.acquire === "function",
    hasKeys: typeof host.clusterKeys.getOrCreate === "function",
  };
  return {
    kind: "providertypes",
    spec: { name, description: "a test provider" },
    async create() { return { status: 0, result: { providerid: name } }; },
    async confirm() { return { status: 0 }; },
    async delete() { return { status: 0 }; },
    async close() { seen.closed.push(name); },
  };
};
${exportAs === "default" ? "export default" : "export const plugins ="} [${names.map((n) => `provider(${JSON.stringify(n)})`).join(", ")}];
`;

async function start(t: Ctx, id: string, pluginModules: string[], env: Record<string, string> = {}) {
  const p = await startProvisioner({
    nc: t.context.nc,
    log: silentLogger,
    id,
    capacity: 2,
    workDir: join(t.context.dir, "work"),
    heartbeatMs: 200,
    pullExpiresMs: 1000,
    assignmentPollMs: 500,
    pluginModules,
    env,
  });
  t.context.started.push(p);
  return p;
}

async function record(nc: NatsConnection, id: string): Promise<ProvisionerRecord | undefined> {
  return (await readValue<ProvisionerRecord>(await openBucket(nc, buckets.provisioners), kvKey(id)))?.value;
}

async function hasProviderSpec(nc: NatsConnection, name: string): Promise<boolean> {
  return (await readValue(await openBucket(nc, buckets.pluginTypes), pluginTypeKey("providertypes", name))) !== undefined;
}

/** Starting with these modules fails with a message naming `named` and matching `problem`; nothing registered. */
async function refusesToStart(t: Ctx, modules: string[], named: string, problem: RegExp, unregistered: string[] = []): Promise<void> {
  const id = uniqueName("prov");
  const err = await t.throwsAsync<Error>(start(t, id, modules));
  t.is(err?.name, "PluginModuleError");
  t.regex(err?.message ?? "", new RegExp(`^plugin module ${escape(named)}: `));
  t.regex(err?.message ?? "", problem);
  t.is(await record(t.context.nc, id), undefined, "no provisioner record");
  for (const name of unregistered) t.false(await hasProviderSpec(t.context.nc, name), `no spec of ${name}`);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

test("plugin modules - a module's factories get the host and register beside the bundled plugins", async (t) => {
  const [a, b] = [uniqueName("prov-a"), uniqueName("prov-b")];
  const first = await writeModule(t, providerModule([a]));
  const second = await writeModule(t, providerModule([b], "plugins"));
  const id = uniqueName("prov");
  const p = await start(t, id, [first, second], { CORRAL_TEST_SETTING: "from-env" });
  const r = await record(t.context.nc, id);
  t.true(r?.plugins.providertypes.includes(a) && r.plugins.providertypes.includes(b), "both modules' providers");
  t.true(r?.plugins.providertypes.includes("sim"), "the bundled ones still");
  t.true(await hasProviderSpec(t.context.nc, a));
  t.deepEqual(observed().hosts[a], { provisionerId: id, workDir: join(t.context.dir, "work"), setting: "from-env", hasPool: true, hasKeys: true });
  await p.stop();
  t.true(observed().closed.includes(a) && observed().closed.includes(b), "closed when the provisioner stops");
});

test("plugin modules - paths are relative to the given directory, packages import as from the provisioner", async (t) => {
  const name = uniqueName("prov-rel");
  const path = await writeModule(t, providerModule([name]));
  const id = uniqueName("prov");
  const p = await startProvisioner({
    nc: t.context.nc,
    log: silentLogger,
    id,
    capacity: 1,
    workDir: join(t.context.dir, "work"),
    pluginModules: [`./${relative(t.context.dir, path)}`, "@corral/provider-ec2", "@corral/provider-lxd"],
    pluginModulesDir: t.context.dir,
  });
  t.context.started.push(p);
  t.true((await record(t.context.nc, id))?.plugins.providertypes.includes(name));
});

test("plugin modules - an empty array is a module that contributes nothing", async (t) => {
  const empty = await writeModule(t, "export default [];\n");
  const id = uniqueName("prov");
  await start(t, id, [empty]);
  t.truthy(await record(t.context.nc, id));
});

test("plugin modules - a missing file stops the start, naming it", async (t) => {
  const missing = join(t.context.dir, "no-such-plugin.mjs");
  await refusesToStart(t, [missing], missing, /not found: no such file/);
});

test("plugin modules - a missing package stops the start, naming it", async (t) => {
  await refusesToStart(t, ["@corral/no-such-plugin"], "@corral/no-such-plugin", /not found: no such package/);
});

test("plugin modules - a module that throws while loading stops the start", async (t) => {
  const bad = await writeModule(t, 'throw new Error("the cloud SDK is not installed");\n');
  await refusesToStart(t, [bad], bad, /failed while loading: the cloud SDK is not installed/);
});

test("plugin modules - a missing import inside a module is a load failure of the module, not 'not found'", async (t) => {
  const bad = await writeModule(t, 'import "@corral/no-such-dependency";\nexport default [];\n');
  await refusesToStart(t, [bad], bad, /failed while loading: .*no-such-dependency/);
});

test("plugin modules - wrong shapes stop the start with what is wrong", async (t) => {
  const none = await writeModule(t, "export const other = 1;\n");
  await refusesToStart(t, [none], none, /exports no plugin factories/);
  const object = await writeModule(t, "export default { create() {} };\n");
  await refusesToStart(t, [object], object, /default export is an object, not an array of plugin factories/);
  const notFunction = await writeModule(t, "export default [() => null, 42];\n");
  await refusesToStart(t, [notFunction], notFunction, /factory 1 is a number, not a function/);
  const both = await writeModule(t, "export default [];\nexport const plugins = [];\n");
  await refusesToStart(t, [both], both, /exports both a default export and `plugins`/);
});

test("plugin modules - a factory that throws stops the start; plugins made before are closed, none registered", async (t) => {
  const good = uniqueName("prov-good");
  const before = await writeModule(t, providerModule([good]));
  const bad = await writeModule(t, 'export default [() => { throw new Error("no credentials for the cloud"); }];\n');
  await refusesToStart(t, [before, bad], bad, /factory 0 threw: no credentials for the cloud/, [good]);
  t.true(observed().closed.includes(good), "the earlier module's plugin was closed");
});

test("plugin modules - a factory returning no usable plugin stops the start", async (t) => {
  const incomplete = await writeModule(t, 'export default [async () => ({ kind: "providertypes", spec: { name: "half" }, async create() {} })];\n');
  await refusesToStart(t, [incomplete], incomplete, /factory 0 returned providertypes half without confirm, delete/);
  const kindless = await writeModule(t, 'export default [() => ({ kind: "machines", spec: { name: "odd" } })];\n');
  await refusesToStart(t, [kindless], kindless, /factory 0 returned plugin odd of kind the string "machines"/);
  const nothing = await writeModule(t, "export default [() => undefined];\n");
  await refusesToStart(t, [nothing], nothing, /factory 0 returned undefined, not a plugin object/);
});

test("plugin modules - a name a bundled plugin carries stops the start", async (t) => {
  const clash = await writeModule(t, providerModule(["sim"]));
  await refusesToStart(t, [clash], clash, /providertypes sim is already carried by a bundled plugin/);
  t.true(observed().closed.includes("sim"), "the clashing plugin was closed");
});

test("plugin modules - two modules carrying one name stop the start, naming both", async (t) => {
  const name = uniqueName("prov-twice");
  const first = await writeModule(t, providerModule([name]));
  const second = await writeModule(t, providerModule([name]));
  await refusesToStart(t, [first, second], second, new RegExp(`providertypes ${name} is already carried by plugin module ${escape(first)}`), [name]);
});

test("plugin modules - a module listed twice stops the start", async (t) => {
  const once = await writeModule(t, "export default [];\n");
  await refusesToStart(t, [once, once], once, /is listed twice/);
});

/** Runs the provisioner process from the repository root with `CORRAL_PROVISIONER_PLUGINS`. */
function provisionerProcess(t: Ctx, id: string, plugins: string) {
  const child = spawn(process.execPath, ["--import=tsx", "provisioner/src/index.ts"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      CORRAL_NATS_URL: t.context.nats.url,
      CORRAL_PROVISIONER_ID: id,
      CORRAL_PROVISIONER_CAPACITY: "1",
      CORRAL_PROVISIONER_WORKDIR: join(t.context.dir, "work-process"),
      CORRAL_PROVISIONER_PLUGINS: plugins,
      CORRAL_LOG_LEVEL: "info",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

test("plugin modules - the process loads provisioner.plugins, paths relative to its working directory", async (t) => {
  const name = uniqueName("prov-proc");
  const path = await writeModule(t, `globalThis.__corralPluginModulesTest = { hosts: {}, closed: [] };\n${providerModule([name])}`);
  const id = uniqueName("child");
  // The temporary directory is outside the repository: the relative path starts with "../".
  const run = provisionerProcess(t, id, `${relative(repoRoot, path)},@corral/provider-ec2`);
  t.teardown(() => void run.child.kill("SIGKILL"));
  await eventually(async () => (await record(t.context.nc, id))?.plugins.providertypes.includes(name) ?? false, {
    what: "the child registered the module's provider",
    timeoutMs: 20_000,
  });
  // SIGTERM stops it cleanly once it has started (its handler is installed then).
  await eventually(() => run.stderr().includes('"msg":"provisioner service started"'), { what: "the child started", timeoutMs: 20_000 });
  run.child.kill("SIGTERM");
  t.is(await run.exited, 0);
});

test("plugin modules - the process exits 1 at start for a bad module, naming it, with nothing registered", async (t) => {
  const name = uniqueName("prov-never");
  const good = await writeModule(t, `globalThis.__corralPluginModulesTest = { hosts: {}, closed: [] };\n${providerModule([name])}`);
  const id = uniqueName("child");
  const run = provisionerProcess(t, id, `${relative(repoRoot, good)}, ./no-such-dir/acme-cloud.js`);
  t.teardown(() => void run.child.kill("SIGKILL"));
  t.is(await run.exited, 1);
  t.regex(run.stderr(), /plugin module \.\/no-such-dir\/acme-cloud\.js: not found/);
  t.is(await record(t.context.nc, id), undefined);
  t.false(await hasProviderSpec(t.context.nc, name));
});
