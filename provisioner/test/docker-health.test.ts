import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import type { TaskMessage } from "@corral/contracts";
import { silentLogger } from "@corral/shared";
import type { ProviderPlugin } from "@corral/provisioner";
import { ClusterKeys, createDockerProvider, DockerClient, LABEL, labelTerm, SshPool } from "@corral/provisioner/testing";
import { ensureDockerForTests } from "../../test/helpers/docker-hosts.js";
import { testWithNats } from "../../test/helpers/nats-test.js";
import { taskMessage, uniqueName } from "./helpers.js";
import { checkHealth, healthTargetOf } from "./helpers/health.js";
import { pluginContext } from "./helpers/plugin-context.js";

const exec = promisify(execFile);

const SOCKET = "/var/run/docker.sock";
const network = uniqueName("corral-health-net");
const tenant = uniqueName("t-health");
let provider: ProviderPlugin;

/** The docker provider's health checks against this machine's Docker daemon and the corral/node image. */
const test = testWithNats("docker-health-test", async (nc) => {
  await ensureDockerForTests();
  const clusterKeys = new ClusterKeys(nc);
  provider = createDockerProvider({
    access: { pool: new SshPool({ log: silentLogger }), credentials: { workDir: "/nonexistent", clusterKeys } },
    nc,
    log: silentLogger,
    clusterKeys,
    reconcileIntervalMs: 0,
    socketPath: SOCKET,
  });
});

test.after.always(async () => {
  const docker = new DockerClient({ socketPath: SOCKET });
  for (const c of await docker.listContainers([labelTerm(LABEL.tenant, tenant)]).catch(() => [])) await docker.removeContainer(c.Id);
  await provider?.close?.();
  await exec("docker", ["network", "rm", network]).catch(() => undefined);
});

const clusterId = randomUUID().slice(0, 8);
const nodeTask = (nodenum: number, provisioner: Record<string, string> = { network }): TaskMessage =>
  taskMessage({
    tenant,
    clusterId,
    nodeId: `${clusterId}-${nodenum}`,
    taskName: "CREATE",
    config: { hostname: `node-${nodenum}.${clusterId}.corral.test`, nodenum, provider: { name: "docker-test", providertype: "docker", provisioner } },
  });

/** A node whose container CREATE made (running), and its health target. */
async function createdNode(nodenum: number) {
  const task = nodeTask(nodenum);
  const created = await provider.create(pluginContext(task));
  if (created.status !== 0) throw new Error(`CREATE failed: ${created.stderr}`);
  return { target: healthTargetOf(task, [created]), container: String(created.result?.["providerid"]) };
}

test("running is healthy, stopped unreachable, removed missing; one listing answers a batch", async (t) => {
  const [one, two] = await Promise.all([createdNode(1000), createdNode(1001)]);
  t.deepEqual(
    (await checkHealth(provider, [one.target, two.target])).map((h) => h.state),
    ["healthy", "healthy"],
  );
  const [healthy] = await checkHealth(provider, [one.target]);
  t.regex(healthy!.message, /^docker: container corral-.+ is running$/);

  await exec("docker", ["stop", "-t", "0", one.container]);
  const [stopped, stillUp] = await checkHealth(provider, [one.target, two.target]);
  t.is(stopped!.state, "unreachable");
  t.regex(stopped!.message, /is exited \(exit code \d+\)$/, "the exit code, no time: the same finding gives the same message");
  t.is(stillUp!.state, "healthy");

  await exec("docker", ["rm", "-f", two.container]);
  const [, removed] = await checkHealth(provider, [one.target, two.target]);
  t.is(removed!.state, "missing");
  t.is(removed!.message, `docker: node node-1001.${clusterId}.corral.test has no container on the Docker host at ${SOCKET}`);
});

test("a node is found by its labels when its reported container is gone; its batch is its Docker host", async (t) => {
  const node = await createdNode(1002);
  const stale = { ...node.target, config: { ...node.target.config, results: { ...node.target.config.results, providerid: "0000000000000000" } } };
  t.is((await checkHealth(provider, [stale]))[0]!.state, "healthy", "the node's labelled container is its machine");
  const health = provider.health!;
  t.is(health.batchOf(node.target), SOCKET);
  const elsewhere = healthTargetOf(nodeTask(1003, { network, socket_path: "/nonexistent/docker.sock" }), []);
  t.is(health.batchOf(elsewhere), "/nonexistent/docker.sock");
  await t.throwsAsync(checkHealth(provider, [elsewhere]), { message: /not reachable at \/nonexistent\/docker.sock/ }, "a daemon that does not answer fails the batch (unknown)");
});
