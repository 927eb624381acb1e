/**
 * Where automators run a node's actions is the node's provider's declaration (`capabilities.localActions` on its
 * spec), read from the provider plugin the provisioner carries, not a list of names in the core: a provider
 * declared local that is not `sim` runs its nodes' actions on the provisioner host; one that does not declare it,
 * or a provider type the provisioner does not carry, is a real machine reached over SSH.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import anyTest, { type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { startNats, type NatsHandle } from "@corral/deploy";
import type { PluginSpec, TaskMessage } from "@corral/contracts";
import { connectNats, ensureStreams, silentLogger } from "@corral/shared";
import { createShellAutomator, nodeDir, startProvisioner, type ProviderPlugin, type RunningProvisioner } from "@corral/provisioner";
import { assignTenant, publishTask, taskMessage, uniqueName, waitResult } from "./helpers.js";

const test = anyTest as TestFn<{ nats: NatsHandle; nc: NatsConnection; workDir: string; provisioner: RunningProvisioner; tenant: string }>;

/** A provider whose machines are the provisioner host itself. */
const WORKBENCH: PluginSpec = { name: "workbench", description: "Nodes are the provisioner host", capabilities: { localActions: true } };
/** A provider of real machines (declares nothing). */
const FARM: PluginSpec = { name: "farm", description: "Real machines" };

const provider = (spec: PluginSpec): ProviderPlugin => ({
  kind: "providertypes",
  spec,
  create: async () => ({ status: 0 }),
  confirm: async () => ({ status: 0 }),
  delete: async () => ({ status: 0 }),
});

test.before(async (t) => {
  t.context.nats = await startNats({ jetstream: true, syncAlways: false });
  t.context.nc = await connectNats({ url: t.context.nats.url, name: "provisioner-local-actions-test" });
  await ensureStreams(t.context.nc);
  t.context.workDir = await mkdtemp(join(tmpdir(), "corral-prov-local-actions-"));
  t.context.tenant = uniqueName("t");
  t.context.provisioner = await startProvisioner({
    nc: t.context.nc,
    log: silentLogger,
    id: uniqueName("prov"),
    capacity: 2,
    workDir: t.context.workDir,
    pullExpiresMs: 1000,
    assignmentPollMs: 500,
    // No SSH access: an action that goes to a real machine says so instead of trying.
    plugins: [provider(WORKBENCH), provider(FARM), createShellAutomator()],
  });
  await assignTenant(t.context.nc, t.context.provisioner.id, t.context.tenant, 2);
});

test.after.always(async (t) => {
  await t.context.provisioner?.stop();
  await t.context.nc?.drain();
  await t.context.nats?.stop();
  await rm(t.context.workDir, { recursive: true, force: true });
});

function shellTask(tenant: string, providertype: string, taskName: TaskMessage["taskName"] = "INSTALL"): TaskMessage {
  return taskMessage({
    tenant,
    taskName,
    config: {
      provider: { name: `a-${providertype}`, providertype, provisioner: {} },
      services: ["web"],
      automators: ["shell"],
      service: { name: "web", action: { type: "shell", fields: { script: 'echo "ran in $(pwd)"' } } },
    },
  });
}

async function run(t: { context: { nc: NatsConnection } }, task: TaskMessage) {
  await publishTask(t.context.nc, task);
  return waitResult(t.context.nc, task, 20_000);
}

const REMOTE = /is a real machine, and this provisioner was started without SSH access/;

test("local actions - a provider declared local (not sim) runs its nodes' actions on the provisioner host", async (t) => {
  const task = shellTask(t.context.tenant, WORKBENCH.name);
  const result = await run(t, task);
  t.is(result.status, 0, result.stderr);
  t.is(result.stdout, `ran in ${nodeDir(t.context.workDir, t.context.tenant, task.clusterId, task.nodeId)}\n`);
});

test("local actions - BOOTSTRAP of a local node readies its directory on the provisioner host", async (t) => {
  const task = shellTask(t.context.tenant, WORKBENCH.name, "BOOTSTRAP");
  const result = await run(t, task);
  t.is(result.status, 0, result.stderr);
  t.is(result.stdout, `node directory ${nodeDir(t.context.workDir, t.context.tenant, task.clusterId, task.nodeId)} ready\n`);
});

test("local actions - a carried provider that declares nothing is a real machine", async (t) => {
  const result = await run(t, shellTask(t.context.tenant, FARM.name));
  t.is(result.status, 1);
  t.regex(result.stderr ?? "", REMOTE);
});

test("local actions - a provider type the provisioner does not carry is a real machine, even if named sim", async (t) => {
  for (const type of ["unknown-cloud", "sim"]) {
    const result = await run(t, shellTask(t.context.tenant, type));
    t.is(result.status, 1, type);
    t.regex(result.stderr ?? "", REMOTE, type);
  }
});
