/**
 * The ec2 provider against the EC2 emulator whose instances are containers of the node image: CONFIRM reaches
 * them over SSH with the cluster key, pins the host keys their console shows, refuses a key the console does not
 * show, trusts on first use only when the provider says so, and lets a user's own key pair in.
 * The tests run one after the other: the launch faults they arm apply to the next launch.
 */
import { randomUUID } from "node:crypto";
import { generateSshKeyPair, nodeTarget, withTarget, type PluginOutcome } from "@corral/provisioner/sdk";
import { Ec2Api, TAG } from "../src/index.js";
import { startEc2Emulator, type Ec2Emulator } from "../../../test/helpers/ec2-emulator/index.js";
import { dockerExec, removeTestContainers } from "../../../test/helpers/docker-hosts.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";
import { eventually } from "../../../test/helpers/eventually.js";
import { harness, nodeTask, uniqueName, type Harness, type NodeInput } from "./harness.js";

let emulator: Ec2Emulator;
let h: Harness;

const test = testWithNats("provider-ec2-docker", async (nc) => {
  emulator = await startEc2Emulator();
  h = harness(nc, { confirmTimeoutMs: 90_000 });
});

test.after.always(async () => {
  await h?.provider.close?.();
  await h?.pool.close();
  await emulator?.stop();
  await removeTestContainers();
});

const node = (prefix: string, extra: Partial<NodeInput> = {}): NodeInput => ({
  tenant: uniqueName(`t-${prefix}`),
  clusterId: randomUUID().slice(0, 8),
  ...extra,
  fields: { access_key_id: "AKIADOCKERTEST000000", secret_access_key: "docker-test-secret", ...extra.fields },
});
const run = (input: NodeInput, taskName: "CREATE" | "CONFIRM" | "DELETE", previous: PluginOutcome[] = []) => h.run(nodeTask(emulator.url, input, taskName, previous));

/** Runs `command` on the node as the automators reach it: its results' address, ssh-auth and pinned keys. */
async function onNode(input: NodeInput, previous: PluginOutcome[], command: string): Promise<PluginOutcome> {
  const task = nodeTask(emulator.url, input, "BOOTSTRAP", previous);
  const resolved = await nodeTarget(task, h.host.ssh.credentials);
  if (!resolved.ok) throw new Error(resolved.error);
  return withTarget(h.pool, resolved.target, new AbortController().signal, "test", async (remote) => {
    const out = await remote.run({ command, timeoutMs: 20_000, signal: new AbortController().signal });
    return { status: out.exitCode ?? -1, stdout: out.stdout.text(), stderr: out.stderr.text() };
  });
}

test.serial("CREATE, CONFIRM with the console's host keys pinned, commands over SSH as root through sudo, DELETE", async (t) => {
  const n = node("life");
  const created = await run(n, "CREATE");
  t.is(created.status, 0, created.stderr);
  const confirmed = await run(n, "CONFIRM", [created]);
  t.is(confirmed.status, 0, confirmed.stderr);
  const instance = emulator.instance(String(created.result?.["providerid"]))!;
  t.is(instance.state, "running");
  t.deepEqual(confirmed.ipaddresses, { access_v4: instance.privateIp, bind_v4: instance.privateIp });
  t.is(confirmed.hostname, `${instance.id}.ec2.internal`, "the private DNS name, which the other instances resolve");
  t.is(confirmed.result?.["ssh_host_key_trust"], "console-output");
  const machineKeys = (await dockerExec(instance.containerId!, ["sh", "-c", "cat /etc/ssh/ssh_host_*_key.pub"])).stdout;
  const pinned = confirmed.result?.["ssh_host_keys"] as Record<string, string>;
  t.true(Object.keys(pinned).length > 0);
  for (const [type, key] of Object.entries(pinned)) t.true(machineKeys.includes(`${type} ${key}`), `pinned ${type} is the machine's`);
  t.regex(confirmed.stdout ?? "", /host keys ssh-ed25519 SHA256:\S+ pinned, as the instance's console shows/);

  const ran = await onNode(n, [created, confirmed], "id -un; hostname -f; getent hosts $(hostname -f) | cut -d' ' -f1");
  t.is(ran.status, 0, ran.stderr);
  t.deepEqual(ran.stdout?.trim().split("\n"), ["root", `${instance.id}.ec2.internal`, instance.privateIp]);

  const deleted = await run(n, "DELETE", [created, confirmed]);
  t.is(deleted.status, 0, deleted.stderr);
  await eventually(() => instance.state === "terminated", { what: "the instance terminated", timeoutMs: 20_000 });
  t.is((await dockerExec(instance.containerId!, ["true"])).exitCode === 0, false, "its container is gone");
});

test.serial("a host key the console does not show is refused", async (t) => {
  const n = node("foreign");
  emulator.nextLaunches({ kind: "console", keys: "foreign" });
  const created = await run(n, "CREATE");
  const confirmed = await run(n, "CONFIRM", [created]);
  t.is(confirmed.status, 1);
  t.regex(confirmed.stderr ?? "", /host key/);
  t.regex(confirmed.stderr ?? "", new RegExp(`instance ${created.result?.["providerid"]}'s console shows ssh-ed25519 SHA256:`));
  t.is(confirmed.result, undefined, "nothing pinned");
});

test.serial("a console without host keys: CONFIRM waits and gives up, unless first-use trust is on, which the node records", async (t) => {
  const strict = harness(h.host.nc, { confirmTimeoutMs: 6_000, pollMs: 100, maxPollMs: 500 });
  try {
    const n = node("nokeys");
    emulator.nextLaunches({ kind: "console", keys: "none" });
    const created = await strict.run(nodeTask(emulator.url, n, "CREATE"));
    const confirmed = await strict.run(nodeTask(emulator.url, n, "CONFIRM", [created]));
    t.is(confirmed.status, 1);
    t.regex(confirmed.stderr ?? "", /gave up after 6 s waiting for the SSH host keys on instance i-\w+'s console/);
    t.regex(confirmed.stderr ?? "", /trust_host_key_on_first_use/);
  } finally {
    await strict.provider.close?.();
    await strict.pool.close();
  }

  const trusting = node("tofu", { fields: { trust_host_key_on_first_use: "true" } });
  emulator.nextLaunches({ kind: "console", keys: "none" });
  const created = await run(trusting, "CREATE");
  const confirmed = await run(trusting, "CONFIRM", [created]);
  t.is(confirmed.status, 0, confirmed.stderr);
  t.is(confirmed.result?.["ssh_host_key_trust"], "first-use");
  t.regex(confirmed.stdout ?? "", /trusted on first use/);
  const instance = emulator.instance(String(created.result?.["providerid"]))!;
  const machineKeys = (await dockerExec(instance.containerId!, ["sh", "-c", "cat /etc/ssh/ssh_host_*_key.pub"])).stdout;
  for (const [type, key] of Object.entries(confirmed.result?.["ssh_host_keys"] as Record<string, string>)) t.true(machineKeys.includes(`${type} ${key}`));
  t.is((await onNode(trusting, [created, confirmed], "true")).status, 0);
});

test.serial("a user's key pair is let in beside the cluster's; a public address is the access address", async (t) => {
  const mine = generateSshKeyPair("me@laptop");
  const api = new Ec2Api({ region: "us-east-1", endpoint: emulator.url, credentials: { accessKeyId: "AKIAUSER", secretAccessKey: "s" } });
  const keyName = uniqueName("my-key");
  await api.importKeyPair(keyName, mine.publicKey, []);
  api.destroy();

  const n = node("userkey", { fields: { key_name: keyName, associate_public_ip: "true" } });
  const created = await run(n, "CREATE");
  t.is(created.status, 0, created.stderr);
  const confirmed = await run(n, "CONFIRM", [created]);
  t.is(confirmed.status, 0, confirmed.stderr);
  const instance = emulator.instance(String(created.result?.["providerid"]))!;
  t.truthy(instance.publicIp);
  t.not(instance.publicIp, instance.privateIp);
  t.deepEqual(confirmed.ipaddresses, { access_v4: instance.publicIp, bind_v4: instance.privateIp });
  t.is(instance.authorizedKeys.length, 2);
  t.is(instance.tags.get(TAG.node), `${n.clusterId}-1000`);

  const asUser = await withTarget(
    h.pool,
    { host: instance.publicIp!, port: 22, username: "admin", privateKey: mine.privateKey, hostKeys: confirmed.result?.["ssh_host_keys"] as Record<string, string> },
    new AbortController().signal,
    "user login",
    async (remote) => {
      const out = await remote.run({ command: "id -un", timeoutMs: 20_000, signal: new AbortController().signal });
      return { status: out.exitCode ?? -1, stdout: out.stdout.text() };
    },
  );
  t.is(asUser.status, 0, asUser.stderr);
  t.is(asUser.stdout?.trim(), "root", "the user's key logs in as admin, with sudo");
  t.is((await run(n, "DELETE", [created, confirmed])).status, 0);
});

test.serial("unknown key pair of a user: CREATE fails saying so", async (t) => {
  const created = await run(node("nokey", { fields: { key_name: "nobody-s-key" } }), "CREATE");
  t.is(created.status, 1);
  t.regex(created.stderr ?? "", /your key pair nobody-s-key \(provider field key_name\) does not exist in http:\/\/127\.0\.0\.1:\d+/);
});
