/**
 * Nothing of a deleted tenant stays on a provisioner host. The provisioner sees a deletion as the services leave
 * it in the buckets it may read: the tenant's workers gone from the assignment, its cluster records purged
 * (`corral_clusters`), its active resource set emptied (`corral_plugin_active`). Then its directory (synced
 * resources, node directories, temporary files) goes, what still runs as its user is killed and its uid is
 * retired, on a running provisioner and on one started after the deletion. Real nats-server, real resource sync,
 * real sandboxed processes.
 */
import { randomInt, randomUUID } from "node:crypto";
import { lstat, mkdtemp, readFile, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import anyTest, { type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { Objm } from "@nats-io/obj";
import { startNats, type NatsHandle } from "@corral/deploy";
import { buckets, kvKey, objectStores } from "@corral/contracts";
import { connectNats, ensureStreams, openBucket, putValue, silentLogger } from "@corral/shared";
import { createShellAutomator, createSimProvider, nodeDir, resourceDir, startProvisioner, tenantDir, type RunningProvisioner } from "@corral/provisioner";
import { createLocalSandbox, type LocalSandbox, tenantTmpDir } from "@corral/provisioner/testing";
import { assignTenant, eventually, publishTask, taskMessage, uniqueName, waitResult } from "./helpers.js";

interface Context {
  nats: NatsHandle;
  nc: NatsConnection;
  sandbox: LocalSandbox;
}
const test = anyTest as TestFn<Context>;
const isRoot = process.getuid?.() === 0;

test.before(async (t) => {
  t.context.nats = await startNats({ jetstream: true, syncAlways: false });
  t.context.nc = await connectNats({ url: t.context.nats.url, name: "provisioner-tenant-files-test" });
  await ensureStreams(t.context.nc);
  t.context.sandbox = createLocalSandbox({ privatePaths: [] });
});

test.after.always(async (t) => {
  await t.context.nc?.drain();
  await t.context.nats?.stop();
});

const exists = (path: string) => lstat(path).then(() => true, () => false);
const clusterIdNow = () => String(randomInt(10_000_000, 99_999_999));

async function workDirFor(t: { teardown(fn: () => Promise<void>): void }) {
  const dir = await mkdtemp(join(tmpdir(), "corral-prov-tenant-files-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function startOn(t: { context: Context; teardown(fn: () => Promise<void>): void }, workDir: string, filesSweepMs: number): Promise<RunningProvisioner> {
  const provisioner = await startProvisioner({
    nc: t.context.nc,
    log: silentLogger,
    id: uniqueName("prov"),
    capacity: 4,
    workDir,
    sandbox: t.context.sandbox,
    plugins: [createSimProvider(), createShellAutomator({ sandbox: t.context.sandbox })],
    pullExpiresMs: 1000,
    filesSweepMs,
  });
  t.teardown(() => provisioner.stop());
  return provisioner;
}

/** What the clusters service stores for a cluster (the fields a provisioner reads). */
async function storeCluster(nc: NatsConnection, clusterId: string, tenant: string, status: string): Promise<void> {
  await putValue(await openBucket(nc, buckets.clusters), kvKey(clusterId), { tenant, status });
}

/** A tenant's active set with one shell script, as the plugins service publishes it. */
async function publishScript(nc: NatsConnection, tenant: string): Promise<void> {
  const object = `obj-${uniqueName("script")}`;
  await (await new Objm(nc).create(objectStores.pluginResources)).putBlob({ name: object }, new TextEncoder().encode("#!/bin/sh\necho TOOL\n"));
  await putValue(await openBucket(nc, buckets.pluginActive), kvKey(tenant), {
    generation: 1,
    automatortypes: { shell: { scripts: { format: "file", permissions: "0755", active: [{ name: "tool.sh", version: 1, object }] } } },
  });
}

/** What a tenant's deletion leaves in the buckets a provisioner reads (tenancy, clusters and plugins services). */
async function deleteTenant(nc: NatsConnection, provisionerIds: readonly string[], tenant: string, clusterIds: readonly string[]): Promise<void> {
  for (const id of provisionerIds) await assignTenant(nc, id, tenant, 0);
  const clusters = await openBucket(nc, buckets.clusters);
  for (const clusterId of clusterIds) await clusters.purge(kvKey(clusterId));
  await putValue(await openBucket(nc, buckets.pluginActive), kvKey(tenant), { generation: 2 });
}

/** Runs a shell action of the tenant's node through the provisioner; answers the node's directory. */
async function runAction(nc: NatsConnection, workDir: string, tenant: string, clusterId: string, script: string): Promise<string> {
  const task = taskMessage({
    tenant,
    clusterId,
    taskName: "INSTALL",
    config: { services: ["web"], automators: ["shell"], service: { name: "web", action: { type: "shell", fields: { script } } } },
  });
  await publishTask(nc, task);
  const result = await waitResult(nc, task, 20_000);
  if (result.status !== 0) throw new Error(`action failed: ${JSON.stringify(result)}`);
  return nodeDir(workDir, tenant, clusterId, task.nodeId);
}

/** Pids of processes whose command line contains `token`. */
async function processesWith(token: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    if ((await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "")).includes(token)) pids.push(Number(entry));
  }
  return pids;
}

test("a running provisioner removes everything of a tenant once it is deleted; a later tenant of the same name gets a new uid", async (t) => {
  const workDir = await workDirFor(t);
  const provisioner = await startOn(t, workDir, 300);
  const { nc } = t.context;
  const tenant = uniqueName("gone");
  const clusterId = clusterIdNow();
  await publishScript(nc, tenant);
  const script = join(resourceDir(workDir, tenant, "automatortypes", "shell", "scripts"), "tool.sh");
  await storeCluster(nc, clusterId, tenant, "active");
  await assignTenant(nc, provisioner.id, tenant, 1);
  await eventually(() => exists(script), { what: "the tenant's script synced" });
  const token = `${randomInt(1e6)}`;
  const hostTmp = `/tmp/corral-left-${token}`;
  t.teardown(async () => {
    for (const pid of await processesWith(`sleep 3000.${token}`)) process.kill(pid, "SIGKILL");
    await rm(hostTmp, { force: true });
  });
  // A temporary file, one in /tmp (the host's, with tenant users), a background process that outlives the action.
  const node = await runAction(
    nc,
    workDir,
    tenant,
    clusterId,
    `tool.sh > work.txt && echo x > "$(mktemp)" && echo x > ${hostTmp} && (setsid sleep 3000.${token} >/dev/null 2>&1 &)`,
  );
  t.is(await readFile(join(node, "work.txt"), "utf8"), "TOOL\n");
  t.is((await readdir(tenantTmpDir(workDir, tenant))).length, 1);
  const uid = (await stat(node)).uid;

  await new Promise((r) => setTimeout(r, 1_000));
  t.true(await exists(node), "nothing is removed while the tenant has workers and a live cluster");

  await deleteTenant(nc, [provisioner.id], tenant, [clusterId]);
  await eventually(async () => !(await exists(tenantDir(workDir, tenant))), { what: "the tenant's directory removed", timeoutMs: 15_000 });
  t.deepEqual(await processesWith(token), [], "what ran as the tenant's user was killed");
  t.false(await exists(hostTmp), "what the tenant's user left in the host's /tmp is gone");
  if (isRoot) {
    await provisioner.stop();
    t.regex(await readFile(join(workDir, ".sandbox", "ids", String(uid)), "utf8"), /^retired:/, "the uid is retired");
    const again = await t.context.sandbox.forActions(workDir, tenant);
    if ("refused" in again) return t.fail(again.refused);
    const fresh = await again.nodeDir(clusterIdNow(), randomUUID());
    t.not((await stat(fresh)).uid, uid, "a later tenant of the same name gets another uid");
    t.false(await exists(node));
  }
});

test("a provisioner started after the deletion removes the tenant's files at start, and leaves the files tenants still need", async (t) => {
  const workDir = await workDirFor(t);
  const { nc } = t.context;
  const first = await startOn(t, workDir, 3_600_000);
  const [gone, live, withResources] = [uniqueName("gone"), uniqueName("live"), uniqueName("res")];
  const [goneCluster, liveCluster, terminatedCluster] = [clusterIdNow(), clusterIdNow(), clusterIdNow()];
  await publishScript(nc, gone);
  await publishScript(nc, withResources);
  await storeCluster(nc, goneCluster, gone, "active");
  await storeCluster(nc, liveCluster, live, "active");
  await storeCluster(nc, terminatedCluster, withResources, "active");
  for (const tenant of [gone, live, withResources]) await assignTenant(nc, first.id, tenant, 1);
  const goneNode = await runAction(nc, workDir, gone, goneCluster, "echo x > work.txt");
  const liveNode = await runAction(nc, workDir, live, liveCluster, "echo x > work.txt");
  const terminatedNode = await runAction(nc, workDir, withResources, terminatedCluster, "echo x > work.txt");
  await first.stop();

  // While no provisioner runs: the first tenant is deleted, the others keep no workers, one's cluster ends.
  await deleteTenant(nc, [first.id], gone, [goneCluster]);
  for (const tenant of [live, withResources]) await assignTenant(nc, first.id, tenant, 0);
  await storeCluster(nc, terminatedCluster, withResources, "terminated");

  await startOn(t, workDir, 3_600_000);
  await eventually(async () => !(await exists(tenantDir(workDir, gone))), { what: "the deleted tenant's directory removed at start", timeoutMs: 15_000 });
  t.false(await exists(goneNode));
  await eventually(async () => !(await exists(dirname(terminatedNode))), { what: "the terminated cluster's directory removed" });
  t.true(await exists(join(liveNode, "work.txt")), "a live cluster's node keeps its files");
  t.true(await exists(join(tenantDir(workDir, withResources), "automatortypes")), "a tenant with resources keeps them");
});
