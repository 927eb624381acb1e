/**
 * The lxd provider's health checks against the real LXD of this machine (test/helpers/lxd.ts): one system
 * container, running, stopped and deleted; an endpoint that does not answer. Its instance is removed after the file.
 */
import { randomUUID } from "node:crypto";
import { installationId, openClusterRecordReader, silentLogger } from "@corral/shared";
import { ClusterKeys, SshPool, type HealthTarget, type NodeHealthCheck, type ProviderPlugin, type TaskMessage } from "@corral/provisioner/sdk";
import { createLxdProvider } from "@corral/provider-lxd";
import { ensureLxdForTests, lxc, releaseLxdForTests, removeTenantInstances, type LxdForTests } from "../../../test/helpers/lxd.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";

const tenant = `t-health-${randomUUID().slice(0, 6)}`;
const clusterId = randomUUID().slice(0, 8);
let env: LxdForTests;
let pool: SshPool;
let provider: ProviderPlugin;

const test = testWithNats("lxd-health-test");

test.before(async (t) => {
  t.timeout(45 * 60_000);
  env = await ensureLxdForTests();
  const { nc } = t.context;
  pool = new SshPool({ log: silentLogger });
  provider = createLxdProvider({
    pool,
    clusterKeys: new ClusterKeys(nc),
    log: silentLogger,
    clusters: () => openClusterRecordReader(nc),
    installationId: () => installationId(nc),
    socketPath: env.socketPath,
    reconcileIntervalMs: 0,
  });
});

test.after.always(async () => {
  await removeTenantInstances(tenant).catch(() => undefined);
  await provider?.close?.();
  await pool?.close();
  await releaseLxdForTests();
});

function nodeTask(provisioner: Record<string, string>): TaskMessage {
  return {
    tenant,
    clusterId,
    planId: `${clusterId}-001`,
    taskId: `${clusterId}-001-${randomUUID().slice(0, 8)}`,
    dispatch: 1,
    taskName: "CREATE",
    nodeId: `${clusterId}-1000`,
    submitTime: Date.now(),
    config: {
      cluster: {},
      hostname: `node${clusterId}-1000.corral.test`,
      ipaddresses: {},
      nodenum: 1000,
      hardwaretype: "small",
      imagetype: "debian12",
      sshuser: "root",
      services: [],
      automators: [],
      provider: { name: "lxd-test", providertype: "lxd", provisioner },
      results: {},
    },
  };
}

const targetOf = (task: TaskMessage, results: Record<string, unknown>): HealthTarget => ({
  tenant: task.tenant,
  clusterId: task.clusterId,
  nodeId: task.nodeId,
  config: { ...task.config, results: { ...task.config.results, ...(results as HealthTarget["config"]["results"]) } },
  recordedAt: Date.now(),
});

const check = (nodes: HealthTarget[]): Promise<NodeHealthCheck[]> =>
  provider.health!.check(nodes, { workDir: "/nonexistent", provisionerId: "p", signal: new AbortController().signal, log: silentLogger });

test.serial("a running instance is healthy, a stopped one unreachable, a deleted one missing", async (t) => {
  const task = nodeTask(env.providerFields);
  const created = await provider.create({ task, tenant, workDir: "/nonexistent", provisionerId: "p", workerId: "w", signal: new AbortController().signal, log: silentLogger });
  t.is(created.status, 0, created.stderr);
  const name = String(created.result?.["providerid"]);
  const target = targetOf(task, created.result ?? {});

  t.deepEqual(await check([target]), [{ state: "healthy", message: `lxd: instance ${name} is running` }]);
  await lxc(["stop", "--force", name]);
  t.deepEqual(await check([target]), [{ state: "unreachable", message: `lxd: instance ${name} is stopped` }]);
  await lxc(["delete", "--force", name]);
  t.deepEqual(await check([target]), [{ state: "missing", message: `lxd: node ${task.config.hostname} has no instance on ${env.socketPath}` }]);
});

test("batches are per endpoint and project; an LXD that does not answer fails the batch", async (t) => {
  const here = targetOf(nodeTask(env.providerFields), {});
  const elsewhere = targetOf(nodeTask({ ...env.providerFields, socket_path: "/nonexistent/lxd.socket" }), { providerid: "corral-x" });
  const otherProject = targetOf(nodeTask({ ...env.providerFields, project: "other" }), {});
  const health = provider.health!;
  t.not(health.batchOf(here), health.batchOf(elsewhere));
  t.not(health.batchOf(here), health.batchOf(otherProject));
  await t.throwsAsync(check([elsewhere]));
});
