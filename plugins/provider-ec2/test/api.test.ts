/**
 * The ec2 provider against the EC2 emulator with machines that are not there (no Docker): what it asks EC2 for,
 * idempotent launches, a node's single live instance, EC2's errors as task failures, instances that end or hang
 * before they run, DELETE, the orphan sweep, and no secret in any outcome or log line. SSH and host keys are
 * tested on real machines in docker.test.ts.
 */
import { randomUUID } from "node:crypto";
import { buckets, kvKey } from "@corral/contracts";
import { openBucket, putValue, type KV } from "@corral/shared";
import type { PluginOutcome } from "@corral/provisioner/sdk";
import { Ec2Api, keyPairName, sweepEc2Orphans, TAG } from "../src/index.js";
import { startEc2Emulator, type Ec2Emulator } from "../../../test/helpers/ec2-emulator/index.js";
import { fakeMachines } from "../../../test/helpers/ec2-emulator/fake-machines.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";
import { eventually } from "../../../test/helpers/eventually.js";
import { harness, nodeTask, uniqueName, type Harness, type NodeInput } from "./harness.js";

const ACCESS_KEY_ID = "AKIAEC2TESTACCESSKEY";
const SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLESECRET";
const DENIED_KEY_ID = "AKIADENIEDACCESSKEY0";

let emulator: Ec2Emulator;
let h: Harness;
let clusters: KV;
const outcomes: PluginOutcome[] = [];

const test = testWithNats("provider-ec2-api", async (nc) => {
  emulator = await startEc2Emulator({ machines: fakeMachines(), deniedAccessKeys: [DENIED_KEY_ID], terminateDelayMs: 50 });
  h = harness(nc, { confirmTimeoutMs: 3_000, maxAttempts: 3 });
  clusters = await openBucket(nc, buckets.clusters);
});

test.after.always(async () => {
  await h?.provider.close?.();
  await h?.pool.close();
  await emulator?.stop();
});

const credentials = { access_key_id: ACCESS_KEY_ID, secret_access_key: SECRET };
const node = (prefix: string, extra: Partial<NodeInput> = {}): NodeInput => ({
  tenant: uniqueName(`t-${prefix}`),
  clusterId: randomUUID().slice(0, 8),
  ...extra,
  fields: { ...credentials, ...extra.fields },
});

async function run(input: NodeInput, taskName: "CREATE" | "CONFIRM" | "DELETE", previous: PluginOutcome[] = [], signal?: AbortSignal): Promise<PluginOutcome> {
  const outcome = await h.run(nodeTask(emulator.url, input, taskName, previous), signal);
  outcomes.push(outcome);
  return outcome;
}

const nodeInstances = (input: NodeInput, nodenum = input.nodenum ?? 1000) =>
  emulator.instances().filter((i) => i.tags.get(TAG.tenant) === input.tenant && i.tags.get(TAG.node) === `${input.clusterId}-${nodenum}`);
const live = (input: NodeInput, nodenum?: number) => nodeInstances(input, nodenum).filter((i) => i.state === "pending" || i.state === "running");

test.serial("CREATE imports the cluster's key pair and launches one tagged instance with a ClientToken", async (t) => {
  const n = node("create");
  const created = await run(n, "CREATE");
  t.is(created.status, 0, created.stderr);
  const [instance, ...others] = nodeInstances(n);
  t.deepEqual(others, []);
  t.is(created.result?.["providerid"], instance!.id);
  t.deepEqual(created.result?.["ssh-auth"], { user: "admin", cluster_key: true });
  t.regex(created.stdout ?? "", new RegExp(`instance ${instance!.id} \\(t3.micro, ami-\\w+\\) of node node-1000\\.${n.clusterId}\\.corral\\.test launched, pending`));

  const installation = await h.host.installationId();
  t.deepEqual(Object.fromEntries(instance!.tags), {
    [TAG.installation]: installation,
    [TAG.tenant]: n.tenant,
    [TAG.cluster]: n.clusterId,
    [TAG.node]: `${n.clusterId}-1000`,
    Name: `node-1000.${n.clusterId}.corral.test`,
  });
  const pairName = keyPairName(installation, n.tenant, n.clusterId);
  t.is(instance!.keyName, pairName);
  const pair = emulator.keyPairs().find((k) => k.name === pairName);
  t.is(pair?.publicKey, (await h.clusterKeys.read(n.tenant, n.clusterId))?.publicKey.trim());
  t.deepEqual(Object.fromEntries(pair!.tags), { [TAG.installation]: installation, [TAG.tenant]: n.tenant, [TAG.cluster]: n.clusterId });
  t.deepEqual(instance!.authorizedKeys, [pair!.publicKey]);

  const [launch] = emulator.calls("RunInstances").filter((c) => c.params["KeyName"] === pairName);
  t.like(launch?.params, { ImageId: instance!.imageId, InstanceType: "t3.micro", MinCount: "1", MaxCount: "1" });
  t.regex(launch?.params["ClientToken"] ?? "", /^corral-[0-9a-f]{48}$/);
  t.is(launch?.accessKeyId, ACCESS_KEY_ID, "the provider's credentials sign the calls");

  // A second node of the cluster reuses the key pair.
  const second = await run({ ...n, nodenum: 1001 }, "CREATE");
  t.is(second.status, 0, second.stderr);
  t.is(emulator.keyPairs().filter((k) => k.name === pairName).length, 1);
});

test.serial("a cloud that ignores tags at launch gets them by CreateTags", async (t) => {
  const n = node("notags");
  emulator.configure({ tagsOnLaunch: false });
  try {
    const created = await run(n, "CREATE");
    t.is(created.status, 0, created.stderr);
    const [instance] = nodeInstances(n);
    t.is(instance?.id, String(created.result?.["providerid"]));
    const [tagged] = emulator.calls("CreateTags").filter((c) => c.params["ResourceId.1"] === instance?.id);
    t.truthy(tagged, "CreateTags of the new instance");
    t.is(instance?.tags.get(TAG.cluster), n.clusterId);
  } finally {
    emulator.configure({ tagsOnLaunch: true });
  }
});

test.serial("a redelivered CREATE gets the instance of its first run: adopted by tags, or from the ClientToken", async (t) => {
  const n = node("redeliver");
  const first = await run(n, "CREATE");
  t.is(first.status, 0, first.stderr);
  const again = await run(n, "CREATE");
  t.is(again.status, 0, again.stderr);
  t.is(again.result?.["providerid"], first.result?.["providerid"]);
  t.regex(again.stdout ?? "", / adopted, /);
  t.is(nodeInstances(n).length, 1);

  // The provisioner dies while RunInstances is under way, and EC2 does not list the new instance yet: the run
  // again sends the same ClientToken and gets the same instance.
  const m = node("token");
  emulator.configure({ listingLagMs: 60_000 });
  try {
    const hold = emulator.holdReply("RunInstances");
    const killed = new AbortController();
    const dying = run(m, "CREATE", [], killed.signal);
    const call = await hold.arrived;
    killed.abort(new Error("provisioner killed"));
    await t.throwsAsync(dying);
    hold.release();
    const rerun = await run(m, "CREATE");
    t.is(rerun.status, 0, rerun.stderr);
    const launches = emulator.calls("RunInstances").filter((c) => c.params["TagSpecification.1.Tag.4.Value"] === `${m.clusterId}-1000`);
    t.is(launches.length, 2);
    t.is(launches[1]!.params["ClientToken"], call.params["ClientToken"]);
  } finally {
    emulator.configure({ listingLagMs: 0 });
  }
  const [instance, ...others] = nodeInstances(m);
  t.deepEqual(others, [], "one instance for the node");
});

test.serial("an instance that ends before it runs fails CONFIRM with its state reason; the next attempt launches a fresh one", async (t) => {
  const n = node("failed");
  emulator.nextLaunches({ kind: "terminated", code: "Server.InternalError", message: "Server.InternalError: Internal error on launch" });
  const created = await run(n, "CREATE");
  t.is(created.status, 0, created.stderr);
  const confirmed = await run(n, "CONFIRM", [created]);
  t.is(confirmed.status, 1);
  t.regex(confirmed.stderr ?? "", new RegExp(`ec2: instance ${created.result?.["providerid"]} ended terminated before CONFIRM found it running: Server.InternalError: Internal error on launch`));

  // The rollback: DELETE, then CREATE as the next dispatch.
  const deleted = await run(n, "DELETE", [created]);
  t.is(deleted.status, 0, deleted.stderr);
  const retried = await run({ ...n, dispatch: 2 }, "CREATE");
  t.is(retried.status, 0, retried.stderr);
  t.not(retried.result?.["providerid"], created.result?.["providerid"]);
  t.deepEqual(live(n).map((i) => i.id), [retried.result?.["providerid"]]);
  t.is(nodeInstances(n).length, 2);
});

test.serial("a node never has two live instances: a stopped one is terminated before a launch", async (t) => {
  const n = node("stopped");
  const created = await run(n, "CREATE");
  const old = emulator.instance(String(created.result?.["providerid"]))!;
  old.state = "stopped";
  const again = await run({ ...n, dispatch: 2 }, "CREATE");
  t.is(again.status, 0, again.stderr);
  t.not(again.result?.["providerid"], old.id);
  t.not(old.state, "stopped");
  t.true(h.logs.some((l) => l.includes("ec2: extra instances of a node terminated") && l.includes(old.id)));
  t.deepEqual(live(n).map((i) => i.id), [again.result?.["providerid"]]);
});

test.serial("an instance that never leaves pending: CONFIRM gives up after its timeout", async (t) => {
  const n = node("stuck");
  emulator.nextLaunches({ kind: "stuck-pending" });
  const created = await run(n, "CREATE");
  const confirmed = await run(n, "CONFIRM", [created]);
  t.is(confirmed.status, 1);
  t.regex(confirmed.stderr ?? "", new RegExp(`ec2: gave up after 3 s waiting for instance ${created.result?.["providerid"]} to run with its address \\(it is pending\\)`));
});

test.serial("an instance terminated while CONFIRM waits for its console fails CONFIRM at once, with its state reason", async (t) => {
  const n = node("gone");
  emulator.nextLaunches({ kind: "console", keys: "none" });
  const created = await run(n, "CREATE");
  const id = String(created.result?.["providerid"]);
  await eventually(() => emulator.instance(id)?.state === "running", { what: "the instance running" });
  const confirming = run(n, "CONFIRM", [created]);
  await eventually(() => emulator.calls("GetConsoleOutput").some((c) => c.params["InstanceId"] === id), { what: "CONFIRM reading the console" });
  emulator.terminate([id]);
  const confirmed = await confirming;
  t.is(confirmed.status, 1);
  t.regex(
    confirmed.stderr ?? "",
    new RegExp(`ec2: instance ${id} ended (shutting-down|terminated) while CONFIRM waited for its console and SSH: Client.UserInitiatedShutdown: User initiated shutdown`),
  );
});

test.serial("EC2's errors are task failures with AWS's code and message", async (t) => {
  const expect = async (input: NodeInput, code: RegExp, message: RegExp) => {
    const outcome = await run(input, "CREATE");
    t.is(outcome.status, 1);
    t.regex(outcome.stderr ?? "", code);
    t.regex(outcome.stderr ?? "", message);
  };
  emulator.insufficientCapacity(3);
  await expect(node("capacity"), /ec2: RunInstances failed: InsufficientInstanceCapacity: /, /We currently do not have sufficient capacity/);
  emulator.throttle(3, "DescribeInstances");
  await expect(node("throttled"), /ec2: DescribeInstances failed: RequestLimitExceeded: /, /Request limit exceeded\./);
  await expect(node("ami", { image: "ami-0123456789abcdef0" }), /InvalidAMIID\.NotFound/, /The image id '\[ami-0123456789abcdef0\]' does not exist/);
  await expect(node("denied", { fields: { access_key_id: DENIED_KEY_ID } }), /UnauthorizedOperation/, /not authorized to perform: ec2:DescribeInstances/);
  await expect(node("noflavor", { flavor: "" }), /maps no instance type \(field flavor\)/, /hardware type small/);
  await expect(node("noimage", { image: "" }), /maps no AMI id \(field image\)/, /image type debian12/);
  await expect(node("unreachable", { fields: { endpoint: "http://127.0.0.1:9" } }), /ec2: DescribeInstances failed: /, /ECONNREFUSED|connect/);

  // One throttled answer is retried by the SDK: the task succeeds.
  emulator.throttle(1, "RunInstances");
  const retried = await run(node("retried"), "CREATE");
  t.is(retried.status, 0, retried.stderr);
});

test.serial("public addresses go on the network interface; CONFIRM waits for them", async (t) => {
  const n = node("public", { fields: { associate_public_ip: "true", subnet_id: "subnet-0abc", security_group_ids: "sg-1,sg-2" } });
  const created = await run(n, "CREATE");
  t.is(created.status, 0, created.stderr);
  const call = emulator.calls("RunInstances").at(-1)!;
  t.like(call.params, {
    "NetworkInterface.1.DeviceIndex": "0",
    "NetworkInterface.1.AssociatePublicIpAddress": "true",
    "NetworkInterface.1.SubnetId": "subnet-0abc",
    "NetworkInterface.1.SecurityGroupId.1": "sg-1",
    "NetworkInterface.1.SecurityGroupId.2": "sg-2",
  });
  t.false("SubnetId" in call.params);
  await eventually(() => emulator.instance(String(created.result?.["providerid"]))?.state === "running", { what: "the instance running" });
  t.truthy(emulator.instance(String(created.result?.["providerid"]))?.publicIp);
});

test.serial("DELETE terminates, is idempotent, and removes the key pair with the cluster's last instance", async (t) => {
  const n = node("delete");
  const one = await run(n, "CREATE");
  const two = await run({ ...n, nodenum: 1001 }, "CREATE");
  const pairName = keyPairName(await h.host.installationId(), n.tenant, n.clusterId);

  const first = await run(n, "DELETE", [one]);
  t.is(first.status, 0, first.stderr);
  t.regex(first.stdout ?? "", new RegExp(`instance ${one.result?.["providerid"]} \\(was (pending|running)\\) terminating`));
  t.notRegex(first.stdout ?? "", /key pair removed/);
  t.true(emulator.keyPairs().some((k) => k.name === pairName), "the other node still uses the key pair");
  t.truthy(await h.clusterKeys.read(n.tenant, n.clusterId));

  const last = await run({ ...n, nodenum: 1001 }, "DELETE", [two]);
  t.is(last.status, 0, last.stderr);
  t.regex(last.stdout ?? "", /the cluster's key pair removed/);
  t.false(emulator.keyPairs().some((k) => k.name === pairName));
  t.is(await h.clusterKeys.read(n.tenant, n.clusterId), undefined);
  await eventually(() => nodeInstances(n).concat(nodeInstances(n, 1001)).every((i) => i.state === "terminated"), { what: "both terminated" });

  const again = await run(n, "DELETE", [one]);
  t.is(again.status, 0, again.stderr);
  t.regex(again.stdout ?? "", /no instance left to terminate/);
  const never = await run(node("never"), "DELETE", [{ status: 0, result: { providerid: "i-0123456789abcdef0" } }]);
  t.is(never.status, 0, never.stderr);
});

test.serial("the orphan sweep terminates instances of unknown, foreign and terminated clusters and removes their key pairs", async (t) => {
  const tenant = uniqueName("t-sweep");
  const ids = { known: "known001", unknown: "unknwn01", terminated: "termin01", foreign: "foreign1" };
  await putValue(clusters, kvKey(ids.known), { tenant, status: "active" });
  await putValue(clusters, kvKey(ids.terminated), { tenant, status: "terminated" });
  await putValue(clusters, kvKey(ids.foreign), { tenant: `${tenant}-other`, status: "active" });
  const made = new Map<string, string>();
  for (const clusterId of Object.values(ids)) {
    const created = await run({ tenant, clusterId, fields: credentials }, "CREATE");
    t.is(created.status, 0, created.stderr);
    made.set(clusterId, String(created.result?.["providerid"]));
  }
  // A key pair whose cluster's instances are gone already (a DELETE that stopped half-way).
  const api = new Ec2Api({ region: "us-east-1", endpoint: emulator.url, credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET } });
  const installation = await h.host.installationId();
  const leftover = keyPairName(installation, tenant, "leftover");
  await api.importKeyPair(leftover, (await h.clusterKeys.getOrCreate(tenant, "leftover")).publicKey, [
    { Key: TAG.installation, Value: installation },
    { Key: TAG.tenant, Value: tenant },
    { Key: TAG.cluster, Value: "leftover" },
  ]);

  const base = { api, clusters: await h.host.clusters(), clusterKeys: h.clusterKeys, installation, log: h.host.log, scope: [{ Name: `tag:${TAG.tenant}`, Values: [tenant] }] };
  const young = await sweepEc2Orphans({ ...base, orphanGraceMs: 600_000 });
  t.deepEqual(young, { checked: 4, terminated: [], keyPairs: [] }, "nothing younger than the grace period goes");

  const swept = await sweepEc2Orphans({ ...base, orphanGraceMs: 0 });
  t.deepEqual(swept.terminated.sort(), [made.get(ids.unknown), made.get(ids.terminated), made.get(ids.foreign)].sort());
  t.deepEqual(swept.keyPairs, [leftover]);
  const pairs = new Set(emulator.keyPairs().map((k) => k.name));
  t.true(pairs.has(keyPairName(installation, tenant, ids.known)));
  for (const gone of [ids.unknown, ids.terminated, ids.foreign, "leftover"]) {
    t.false(pairs.has(keyPairName(installation, tenant, gone)), `key pair of ${gone}`);
    t.is(await h.clusterKeys.read(tenant, gone), undefined);
  }
  t.is(emulator.instance(made.get(ids.known)!)?.state, "running", "the known cluster keeps its instance");
  t.deepEqual(await sweepEc2Orphans({ ...base, orphanGraceMs: 0 }), { checked: 1, terminated: [], keyPairs: [] });
  api.destroy();
});

test.serial("no outcome and no log line holds the secret key or the access key id", (t) => {
  t.true(outcomes.length > 20);
  for (const text of [...outcomes.map((o) => JSON.stringify(o)), ...h.logs]) {
    t.false(text.includes(SECRET), text);
    t.false(text.includes(ACCESS_KEY_ID), text);
  }
  t.true(h.logs.length > 0);
});
