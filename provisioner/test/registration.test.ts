import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import anyTest, { type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { startNats, type NatsHandle } from "@corral/deploy";
import {
  buckets,
  decode,
  kvKey,
  pluginTypeKey,
  type PluginSpec,
  type ProvisionerRecord,
} from "@corral/contracts";
import {
  connectNats,
  ensureStreams,
  openBucket,
  readValue,
  silentLogger,
} from "@corral/shared";
import { SHELL_SPEC, createShellAutomator, startProvisioner, type RunningProvisioner } from "@corral/provisioner";
import { assign, eventually, uniqueName } from "./helpers.js";

const test = anyTest as TestFn<{ nats: NatsHandle; nc: NatsConnection; workDir: string; started: RunningProvisioner[] }>;

test.before(async (t) => {
  t.context.nats = await startNats({ jetstream: true, syncAlways: false });
  t.context.nc = await connectNats({ url: t.context.nats.url, name: "provisioner-registration-test" });
  await ensureStreams(t.context.nc);
  t.context.workDir = await mkdtemp(join(tmpdir(), "corral-prov-reg-"));
  t.context.started = [];
});

test.after.always(async (t) => {
  await Promise.all(t.context.started.map((p) => p.stop()));
  await t.context.nc?.drain();
  await t.context.nats?.stop();
  await rm(t.context.workDir, { recursive: true, force: true });
});

async function start(t: { context: { nc: NatsConnection; workDir: string; started: RunningProvisioner[] } }, extra = {}) {
  const p = await startProvisioner({
    nc: t.context.nc,
    log: silentLogger,
    id: uniqueName("prov"),
    capacity: 4,
    workDir: t.context.workDir,
    heartbeatMs: 200,
    pullExpiresMs: 1000,
    assignmentPollMs: 500,
    ...extra,
  });
  t.context.started.push(p);
  return p;
}

async function record(nc: NatsConnection, id: string): Promise<ProvisionerRecord | undefined> {
  return (await readValue<ProvisionerRecord>(await openBucket(nc, buckets.provisioners), kvKey(id)))?.value;
}

test("registration - writes the record with capacity, host, plugins and the plugin specs", async (t) => {
  const p = await start(t, { host: "prov-host.example", port: 55056 });
  const r = await record(t.context.nc, p.id);
  t.like(r, {
    id: p.id,
    host: "prov-host.example",
    port: 55056,
    capacityTotal: 4,
    usage: {},
    plugins: { providertypes: ["sim"], automatortypes: ["shell", "chef-solo"] },
  });
  t.true(Math.abs(r!.lastHeartbeat - Date.now()) < 5_000);
  t.true(r!.registeredAt > 0 && r!.registeredAt <= r!.lastHeartbeat);

  const kv = await openBucket(t.context.nc, buckets.pluginTypes);
  const spec = async (kind: "providertypes" | "automatortypes", name: string) =>
    decode<PluginSpec>((await kv.get(pluginTypeKey(kind, name)))!.value);
  const sim = await spec("providertypes", "sim");
  t.is(sim.name, "sim");
  t.deepEqual(sim.parameters?.user?.required ?? [], [], "sim asks its users for nothing");
  t.is(sim.parameters?.user?.fields["sim_password"], undefined);
  t.truthy(sim.parameters?.admin?.fields["fail_confirm"]);
  const shell = await spec("automatortypes", "shell");
  t.deepEqual(shell.parameters?.admin?.required, [["script"]]);
  t.truthy(shell.parameters?.admin?.fields["timeout_s"]);
  const chef = await spec("automatortypes", "chef-solo");
  t.deepEqual(chef.parameters?.admin?.required, [["run_list"]]);
  t.truthy(chef.parameters?.admin?.fields["json_attributes"]);
});

test("registration - with simSecured, provider sim-secured is announced: sim with a required sensitive password", async (t) => {
  const p = await start(t, { simSecured: true });
  t.true((await record(t.context.nc, p.id))?.plugins.providertypes.includes("sim-secured"));
  const kv = await openBucket(t.context.nc, buckets.pluginTypes);
  const spec = decode<PluginSpec>((await kv.get(pluginTypeKey("providertypes", "sim-secured")))!.value);
  t.deepEqual(spec.parameters?.user?.required, [["sim_password"]]);
  t.like(spec.parameters?.user?.fields["sim_password"], { type: "password", sensitive: true });
  t.truthy(spec.parameters?.admin?.fields["fail_confirm"], "the sim admin fields too");
});

test("registration - the default id is <hostname>-<pid>-<random>", async (t) => {
  const p = await startProvisioner({ nc: t.context.nc, log: silentLogger, capacity: 1, workDir: t.context.workDir });
  t.context.started.push(p);
  t.regex(p.id, new RegExp(`^[a-z0-9-]+-${process.pid}-[0-9a-f]{6}$`));
  t.truthy(await record(t.context.nc, p.id));
  await p.stop();
});

test("registration - heartbeats refresh lastHeartbeat", async (t) => {
  const p = await start(t);
  const first = (await record(t.context.nc, p.id))!.lastHeartbeat;
  await eventually(async () => (await record(t.context.nc, p.id))!.lastHeartbeat > first, { what: "a newer heartbeat" });
  t.pass();
});

test("registration - a deleted record is written again, with the plugin specs", async (t) => {
  // An automator of its own name, so removing its spec does not disturb the other tests.
  const name = uniqueName("shell");
  const p = await start(t, { plugins: [{ ...createShellAutomator(), spec: { ...SHELL_SPEC, name } }] });
  const provisioners = await openBucket(t.context.nc, buckets.provisioners);
  const pluginTypes = await openBucket(t.context.nc, buckets.pluginTypes);
  await pluginTypes.purge(pluginTypeKey("automatortypes", name));
  await provisioners.delete(kvKey(p.id));
  const again = await eventually(async () => (await record(t.context.nc, p.id)) ?? false, {
    what: "the record written again",
  });
  t.is(again!.id, p.id);
  await eventually(async () => (await pluginTypes.get(pluginTypeKey("automatortypes", name)))?.operation === "PUT", {
    what: "the spec written again",
    // Written with the record's next heartbeat; a loaded machine can take longer than the default wait.
    timeoutMs: 20_000,
  });
  t.pass();
});

test("registration - stop removes the record", async (t) => {
  const p = await start(t);
  t.truthy(await record(t.context.nc, p.id));
  await p.stop();
  t.is(await record(t.context.nc, p.id), undefined);
});

test("assignment - worker loops follow the assignment and usage shows them", async (t) => {
  t.timeout(300_000);
  const p = await start(t);
  const [a, b] = [uniqueName("tenant-a"), uniqueName("tenant-b")];
  const same = (x: Record<string, number> | undefined, y: Record<string, number>) =>
    JSON.stringify(Object.entries(x ?? {}).sort()) === JSON.stringify(Object.entries(y).sort());
  const usageIs = (want: Record<string, number>) =>
    eventually(
      async () => same((await record(t.context.nc, p.id))?.usage, want) && same(p.usage(), want),
      // A stopped loop counts until it has ended and the registry record is written again: on a loaded machine (CI,
      // SSH containers of other tests beside it) that once took over 20 s.
      { what: `usage ${JSON.stringify(want)}`, timeoutMs: 60_000 },
    );
  await assign(t.context.nc, p.id, { [a]: 2, [b]: 1 });
  await usageIs({ [a]: 2, [b]: 1 });
  await assign(t.context.nc, p.id, { [a]: 1, [b]: 1 });
  await usageIs({ [a]: 1, [b]: 1 });
  await assign(t.context.nc, p.id, { [b]: 3 });
  await usageIs({ [b]: 3 });
  // More than the capacity (4): capped.
  await assign(t.context.nc, p.id, { [a]: 3, [b]: 3 });
  await usageIs({ [a]: 3, [b]: 1 });
  await assign(t.context.nc, p.id, {});
  await usageIs({});
  t.pass();
});

test("assignment - another provisioner's entry starts nothing here", async (t) => {
  const p = await start(t);
  await assign(t.context.nc, uniqueName("someone-else"), { [uniqueName("t")]: 2 });
  await assign(t.context.nc, p.id, { [uniqueName("t")]: 1 });
  await eventually(() => Object.values(p.usage()).reduce((a, b) => a + b, 0) === 1, { what: "one loop" });
  t.pass();
});
