/**
 * The ec2 provider's health checks against the EC2 emulator (machines that are not there): instance states as
 * findings, one DescribeInstances per 200 nodes of a batch, the listing lag after CREATE, a failing API.
 */
import { randomUUID } from "node:crypto";
import { silentLogger } from "@corral/shared";
import type { HealthTarget, NodeHealthCheck, PluginOutcome, TaskMessage } from "@corral/provisioner/sdk";
import { startEc2Emulator, type Ec2Emulator } from "../../../test/helpers/ec2-emulator/index.js";
import { fakeMachines } from "../../../test/helpers/ec2-emulator/fake-machines.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";
import { harness, nodeTask, uniqueName, type Harness, type NodeInput } from "./harness.js";

const credentials = { access_key_id: "AKIAEC2HEALTHTESTKEY", secret_access_key: "health-test-secret" };
let emulator: Ec2Emulator;
let h: Harness;

const test = testWithNats("provider-ec2-health", async (nc) => {
  emulator = await startEc2Emulator({ machines: fakeMachines(), terminateDelayMs: 50 });
  h = harness(nc, { confirmTimeoutMs: 3_000 });
});

test.after.always(async () => {
  await h?.provider.close?.();
  await h?.pool.close();
  await emulator?.stop();
});

/** A node's health target as the worker writes it after CREATE, `ageMs` ago. */
function targetOf(task: TaskMessage, created: PluginOutcome, ageMs = 120_000): HealthTarget {
  const { config } = task;
  return {
    tenant: task.tenant,
    clusterId: task.clusterId,
    nodeId: task.nodeId,
    config: { ...config, results: { ...config.results, ...created.result } },
    recordedAt: Date.now() - ageMs,
  };
}

async function createdNode(input: NodeInput): Promise<{ target: HealthTarget; id: string }> {
  const task = nodeTask(emulator.url, input, "CREATE");
  const created = await h.run(task);
  if (created.status !== 0) throw new Error(`CREATE failed: ${created.stderr}`);
  return { target: targetOf(task, created), id: String(created.result?.["providerid"]) };
}

const check = (nodes: HealthTarget[]): Promise<NodeHealthCheck[]> =>
  h.provider.health!.check(nodes, { workDir: "/nonexistent", provisionerId: "p", signal: new AbortController().signal, log: silentLogger });

const input = (): NodeInput => ({ tenant: uniqueName("t-health"), clusterId: randomUUID().slice(0, 8), fields: credentials });

test.serial("running is healthy, stopped unreachable, terminated or unknown to EC2 missing", async (t) => {
  const base = input();
  const [a, b, c] = await Promise.all([1000, 1001, 1002].map((nodenum) => createdNode({ ...base, nodenum })));
  for (const { id } of [a!, b!, c!]) emulator.instance(id)!.state = "running";
  t.deepEqual((await check([a!.target, b!.target, c!.target])).map((f) => f.state), ["healthy", "healthy", "healthy"]);

  emulator.instance(b!.id)!.state = "stopped";
  emulator.terminate([c!.id]);
  const gone = { ...a!.target, nodeId: `${base.clusterId}-1003`, config: { ...a!.target.config, results: { providerid: "i-0123456789abcdef0" } } };
  const found = await check([a!.target, b!.target, c!.target, gone]);
  t.deepEqual(found[0], { state: "healthy", message: `ec2: instance ${a!.id} is running` });
  t.deepEqual(found[1], { state: "unreachable", message: `ec2: instance ${b!.id} is stopped` });
  t.is(found[2]!.state, "missing");
  t.regex(found[2]!.message, /is (shutting-down|terminated)$/);
  t.deepEqual(found[3], { state: "missing", message: `ec2: instance i-0123456789abcdef0 does not exist in ${emulator.url}` });
});

test.serial("an instance not listed yet right after CREATE is unknown; another node's instance is missing", async (t) => {
  const { target, id } = await createdNode(input());
  const fresh = { ...target, recordedAt: Date.now(), config: { ...target.config, results: { providerid: "i-00000000000000001" } } };
  t.deepEqual(await check([fresh]), [{ state: "unknown", message: `ec2: instance i-00000000000000001 is not listed by ${emulator.url} yet` }]);
  const foreign = { ...target, nodeId: "someone-else-1000" };
  emulator.instance(id)!.state = "running";
  t.is((await check([foreign]))[0]!.state, "missing", "an instance tagged for another node is not this node's machine");
});

test.serial("one DescribeInstances per 200 nodes of a batch; batches by region, endpoint and account; a failing API fails the batch", async (t) => {
  const { target } = await createdNode(input());
  const many = Array.from({ length: 450 }, (_, i) => ({ ...target, config: { ...target.config, results: { providerid: `i-${String(i).padStart(17, "0")}` } } }));
  const before = emulator.calls("DescribeInstances").length;
  const found = await check(many);
  t.is(emulator.calls("DescribeInstances").length - before, 3);
  t.true(found.every((f) => f.state === "missing"));

  const health = h.provider.health!;
  const other = { ...target, config: { ...target.config, provider: { ...target.config.provider, provisioner: { ...target.config.provider.provisioner, access_key_id: "AKIAOTHERACCOUNT0000" } } } };
  t.not(health.batchOf(other), health.batchOf(target));
  t.false(String(health.batchOf(target)).includes(credentials.secret_access_key), "no secret in a batch's name");

  emulator.failNext({ action: "DescribeInstances", code: "UnauthorizedOperation", message: "You are not authorized", status: 403 });
  await t.throwsAsync(check([target]), { message: /UnauthorizedOperation/ });
});
