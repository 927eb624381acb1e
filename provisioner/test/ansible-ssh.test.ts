/**
 * The ansible automator against a real machine: ansible-playbook (Debian's ansible-core) on this host, in the
 * tenant's sandbox, playing a container of the node image over SSH with the node's key and only its pinned host
 * key. Checked inside the container: what the play made, that a failed or timed-out play says why and leaves no
 * process, that no credential reaches the node, the output or the provisioner's disk after the run.
 */
import test from "ava";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAnsible } from "@corral/deploy";
import type { TaskMessage } from "@corral/contracts";
import { silentLogger } from "@corral/shared";
import { nodeDir, resourceDir, type AutomatorPlugin, type ServiceActionCall } from "@corral/provisioner/sdk";
import { generateSshKeyPair, sshKeyFile, SshPool, type RemoteAccess } from "@corral/provisioner/testing";
import { createAnsibleAutomator } from "../src/plugins/ansible/index.js";
import { createTestNetwork, dockerExec, ensureDockerForTests, removeTestContainers, startSshHost, type SshHost, type TestNetwork } from "../../test/helpers/docker-hosts.js";
import { taskMessage } from "./helpers.js";
import { pluginContext } from "./helpers/plugin-context.js";

const serial = test.serial;
const TENANT = "ansible-t1";
const PROVIDER = "static";
let workDir: string;
let network: TestNetwork;
let host: SshHost;
let pool: SshPool;
let access: RemoteAccess;
let ansible: AutomatorPlugin;
let hostKeys: Record<string, string>;
/** Two more nodes of service web, for plays over every node of a step (`hosts: service`). */
let peers: Array<{ host: SshHost; hostKeys: Record<string, string> }>;

test.before(async () => {
  await Promise.all([ensureDockerForTests(), ensureAnsible()]);
  workDir = await mkdtemp(join(tmpdir(), "corral-ansible-"));
  const key = generateSshKeyPair();
  const keyFile = sshKeyFile(workDir, TENANT, PROVIDER, "node-key");
  await mkdir(join(keyFile, ".."), { recursive: true });
  await writeFile(keyFile, key.privateKey, { mode: 0o400 });
  network = await createTestNetwork(`corral-ansible-${process.pid}`);
  host = await startSshHost({ network: network.name, authorizedKeys: key.publicKey, user: { name: "deploy" } });
  pool = new SshPool({ log: silentLogger });
  access = { pool, credentials: { workDir, clusterKeys: undefined } };
  ansible = createAnsibleAutomator({ remote: access });
  const presented = await pool.learnHostKey({ host: host.ip, port: 22, username: "root", privateKey: key.privateKey }, new AbortController().signal);
  hostKeys = { [presented.type]: presented.key };
  peers = await Promise.all(
    [1, 2].map(async () => {
      const peer = await startSshHost({ network: network.name, authorizedKeys: key.publicKey });
      const pinned = await pool.learnHostKey({ host: peer.ip, port: 22, username: "root", privateKey: key.privateKey }, new AbortController().signal);
      return { host: peer, hostKeys: { [pinned.type]: pinned.key } };
    }),
  );
  await writePlaybooks();
});

test.after.always(async () => {
  await pool?.close();
  await host?.stop();
  await Promise.all((peers ?? []).map((p) => p.host.stop()));
  await network?.remove();
  await removeTestContainers();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const NODE_ID = "node-0001";
const OTHER_ID = "node-0002";

function task(overrides: Partial<TaskMessage["config"]> = {}, taskName: TaskMessage["taskName"] = "CONFIGURE"): TaskMessage {
  return taskMessage({
    tenant: TENANT,
    taskName,
    nodeId: NODE_ID,
    config: {
      hostname: "web-1.corral.test",
      services: ["web"],
      cluster: { web: { greeting: "hello" }, peers: "db-1.corral.test" },
      nodes: {
        [NODE_ID]: { hostname: "web-1.corral.test", ipaddresses: { access_v4: host.ip }, nodenum: 1, hardwaretype: "s", imagetype: "d", services: ["web"], automators: ["ansible"] },
        [OTHER_ID]: { hostname: "db-1.corral.test", ipaddresses: { access_v4: "192.0.2.7", bind_v4: "10.0.0.7" }, nodenum: 2, hardwaretype: "s", imagetype: "d", services: ["db", "web"], automators: ["ansible"] },
      },
      provider: { name: "pool1", providertype: PROVIDER, provisioner: { secret_field: "provider-secret-value" } },
      ipaddresses: { access_v4: host.ip, bind_v4: host.ip },
      results: { "ssh-auth": { user: "root", key_resource: "node-key" }, ssh_host_keys: hostKeys, ansible_python: "/usr/bin/python3" },
      ...overrides,
    },
  });
}

const action = (playbook: string, extra: Record<string, string> = {}): ServiceActionCall => ({ name: "CONFIGURE", service: "web", fields: { playbook, ...extra } });
const onNode = async (cmd: string) => (await dockerExec(host.id, ["sh", "-c", cmd])).stdout;
const playbooksDir = () => resourceDir(workDir, TENANT, "automatortypes", "ansible", "playbooks");

async function writePlaybooks(): Promise<void> {
  const web = join(playbooksDir(), "web");
  await mkdir(join(web, "templates"), { recursive: true });
  await writeFile(
    join(web, "site.yml"),
    `- hosts: all
  gather_facts: false
  tasks:
    - name: write the site config
      template:
        src: templates/site.conf.j2
        dest: /etc/corral-site.conf
        mode: "0644"
      tags: [config]
    - name: a task only the probe tag runs
      file:
        path: /tmp/probe-tag
        state: touch
      tags: [never, probe]
    - name: who runs the tasks
      command: id -un
      register: who
      changed_when: false
      tags: [always, whoami]
    - debug:
        msg: "running as {{ who.stdout }}"
      tags: [always, whoami]
`,
  );
  await writeFile(
    join(web, "templates", "site.conf.j2"),
    `greeting={{ corral_config.web.greeting }}
peers={{ corral_config.peers }}
task={{ corral_task.name }} {{ corral_task.service }} {{ corral_task.cluster_id }} {{ corral_task.node_id }} {{ corral_task.hostname }}
me={{ inventory_hostname }} {{ corral_services | join(',') }} {{ ansible_host }}
web_group={{ groups['web'] | sort | join(',') }}
db_group={{ groups['db'] | join(',') }} {{ hostvars['db-1.corral.test'].corral_ipaddresses.bind_v4 }}
extra={{ color | default('none') }}
`,
  );
  await writeFile(
    join(web, "fail.yml"),
    `- hosts: all
  gather_facts: false
  tasks:
    - name: a step that works
      command: "true"
    - name: install the missing package
      shell: "echo 'no such package: corral-nothing' >&2; exit 3"
`,
  );
  await writeFile(
    join(web, "rolling.yml"),
    `- hosts: web
  gather_facts: false
  serial: 1
  tasks:
    - name: one node at a time
      shell: "echo start $(date +%s%N) > /tmp/rolling-window; sleep 1; echo end $(date +%s%N) >> /tmp/rolling-window"
`,
  );
  await writeFile(join(web, "slow.yml"), `- hosts: all\n  gather_facts: false\n  tasks:\n    - name: sleep long\n      command: sleep 600\n`);
  await writeFile(join(web, "facts.yml"), `- hosts: all\n  tasks:\n    - debug:\n        msg: "distribution {{ ansible_distribution }} {{ ansible_distribution_major_version }}"\n`);
}

/** Files left in the node's directory on the provisioner host (the run's own files must be gone). */
async function leftInNodeDir(): Promise<string[]> {
  return (await readdir(nodeDir(workDir, TENANT, "00000001", NODE_ID)).catch(() => [])).filter((f) => f.startsWith("ansible-"));
}

serial("BOOTSTRAP checks python3 on the node over the pinned connection", async (t) => {
  const out = await ansible.bootstrap(pluginContext(task({}, "BOOTSTRAP"), { workDir }));
  t.is(out.status, 0, out.stderr);
  t.regex(out.stdout ?? "", /python3 at \/usr\/bin\/python3 on /);
  t.deepEqual(out.result, { ansible_python: "/usr/bin/python3" }, "later plays use it without discovering it");
});

serial("a play templates a file from corral_config, corral_task, the inventory's groups and extra_vars", async (t) => {
  const out = await ansible.runAction(pluginContext(task(), { workDir }), action("web/site.yml", { extra_vars: '{"color": "blue"}' }));
  t.is(out.status, 0, `${out.stdout}\n${out.stderr}`);
  t.regex(out.stdout ?? "", /running as root/, "a root login runs tasks as root");
  t.regex(out.stdout ?? "", /PLAY RECAP[\s\S]*web-1\.corral\.test\s+: ok=\d+\s+changed=1\s+unreachable=0\s+failed=0/);
  const written = await onNode("cat /etc/corral-site.conf");
  const lines = written.trim().split("\n");
  t.deepEqual(lines, [
    "greeting=hello",
    "peers=db-1.corral.test",
    `task=CONFIGURE web 00000001 ${NODE_ID} web-1.corral.test`,
    `me=web-1.corral.test web ${host.ip}`,
    "web_group=db-1.corral.test,web-1.corral.test",
    "db_group=db-1.corral.test 10.0.0.7",
    "extra=blue",
  ]);
  t.is(await onNode("ls /tmp/probe-tag 2>/dev/null || true"), "", "a task tagged never does not run without its tag");
  for (const text of [out.stdout ?? "", out.stderr ?? ""]) {
    t.false(text.includes("PRIVATE KEY"), "no key in the output");
    t.false(text.includes("provider-secret-value"), "no provider field in the output");
  }
  t.deepEqual(await leftInNodeDir(), [], "inventory, variables, key and run directory are removed");
  t.is((await onNode("grep -rlF -e '-----BEGIN OPENSSH PRIVATE KEY' /root /home /tmp /var/tmp /var/lib 2>/dev/null || true")).trim(), "", "the key never reaches the node's disk");
});

serial("tags and skip_tags choose the tasks; an unchanged file is not changed again", async (t) => {
  const tagged = await ansible.runAction(pluginContext(task(), { workDir }), action("web/site.yml", { tags: "probe", skip_tags: "config" }));
  t.is(tagged.status, 0, tagged.stderr);
  t.not((await onNode("ls /tmp/probe-tag")).trim(), "");
  t.notRegex(tagged.stdout ?? "", /write the site config/);
  const again = await ansible.runAction(pluginContext(task(), { workDir }), action("web/site.yml", { extra_vars: '{"color": "blue"}', tags: "config" }));
  t.regex(again.stdout ?? "", /changed=0/);
});

serial("gathered facts come from the node; without BOOTSTRAP's python3, Ansible discovers it", async (t) => {
  const withoutPython = task({ results: { "ssh-auth": { user: "root", key_resource: "node-key" }, ssh_host_keys: hostKeys } });
  const out = await ansible.runAction(pluginContext(withoutPython, { workDir }), action("web/facts.yml"));
  t.is(out.status, 0, out.stderr);
  t.regex(out.stdout ?? "", /distribution Debian 12/);
});

serial("a failing play fails the action with the failed task's name and message", async (t) => {
  const out = await ansible.runAction(pluginContext(task(), { workDir }), action("web/fail.yml"));
  t.is(out.status, 2, `${out.stdout}\n${out.stderr}`);
  t.regex(out.stderr ?? "", /\[corral\] ansible: task "install the missing package" failed on web-1\.corral\.test: non-zero return code: no such package: corral-nothing/);
  t.regex(out.stdout ?? "", /failed=1/);
  t.deepEqual(await leftInNodeDir(), []);
});

serial("a play past its timeout is killed, with its process on the node", async (t) => {
  const survivors = async () => (await onNode("pgrep -f '[s]leep 600' || true")).trim();
  const started = Date.now();
  // A play starts in 1-2 s on a quiet machine; the timeout leaves room for a loaded one to reach the sleep.
  const running = ansible.runAction(pluginContext(task(), { workDir }), action("web/slow.yml", { timeout_s: "12" }));
  let ended = false;
  void running.finally(() => (ended = true));
  let seen = false;
  while (!seen && !ended) {
    seen = (await survivors()) !== "";
    if (!seen) await new Promise((r) => setTimeout(r, 100));
  }
  t.true(seen, "the play's sleep ran on the node");
  const out = await running;
  t.is(out.status, 1);
  t.regex(out.stderr ?? "", /timed out after 12 s; the play was killed/);
  t.true(Date.now() - started < 60_000);
  for (let i = 0; i < 50 && (await survivors()); i++) await new Promise((r) => setTimeout(r, 200));
  t.is(await survivors(), "", "the remote sleep went with the play");
  t.deepEqual(await leftInNodeDir(), []);
});

serial("a login user other than root: become (the default) runs tasks as root, become false as the user", async (t) => {
  const asDeploy = () => task({ results: { "ssh-auth": { user: "deploy", key_resource: "node-key" }, ssh_host_keys: hostKeys } });
  const become = await ansible.runAction(pluginContext(asDeploy(), { workDir }), action("web/site.yml", { tags: "whoami" }));
  t.is(become.status, 0, become.stderr);
  t.regex(become.stdout ?? "", /running as root/);
  const plain = await ansible.runAction(pluginContext(asDeploy(), { workDir }), action("web/site.yml", { tags: "whoami", become: "false" }));
  t.is(plain.status, 0, plain.stderr);
  t.regex(plain.stdout ?? "", /running as deploy/);
});

serial("only the pinned host key is accepted: another key fails the play as unreachable", async (t) => {
  const other = generateSshKeyPair();
  const wrongPin = { "ssh-ed25519": other.publicKey.split(" ")[1]! };
  const out = await ansible.runAction(
    pluginContext(task({ results: { "ssh-auth": { user: "root", key_resource: "node-key" }, ssh_host_keys: wrongPin } }), { workDir }),
    action("web/site.yml"),
  );
  t.is(out.status, 4, "ansible-playbook's status for unreachable hosts");
  t.regex(out.stderr ?? "", /\[corral\] ansible: web-1\.corral\.test was unreachable at task "write the site config": Failed to connect to the host via ssh: Host key verification failed\.$/m);
});

serial("bad fields and a playbook that is not synced fail before anything runs", async (t) => {
  const ctx = pluginContext(task(), { workDir });
  const missing = await ansible.runAction(ctx, action("gone/site.yml"));
  t.is(missing.status, 1);
  t.regex(missing.stderr ?? "", /playbook gone\/site\.yml is not synced to this provisioner/);
  t.regex((await ansible.runAction(ctx, action("../x/site.yml"))).stderr ?? "", /must be a relative path inside the synced playbooks/);
  t.regex((await ansible.runAction(ctx, action("web/site.yml", { extra_vars: "[1]" }))).stderr ?? "", /extra_vars must be a JSON object/);
  t.regex((await ansible.runAction(ctx, action("web/site.yml", { become: "maybe" }))).stderr ?? "", /become must be true or false/);
  const password = await ansible.runAction(
    pluginContext(task({ results: { "ssh-auth": { user: "root", password: "pw" }, ssh_host_keys: hostKeys } }), { workDir }),
    action("web/site.yml"),
  );
  t.regex(password.stderr ?? "", /logs in with a password; plays log in with a key/);
});

/** The three web nodes of one step: this file's node (nodenum 1) and the two peers, each pinned to its own key. */
function rollingStep(pins: Array<Record<string, string>> = [hostKeys, ...peers.map((p) => p.hostKeys)]) {
  const members = [host, ...peers.map((p) => p.host)].map((h, i) => ({ id: i === 0 ? NODE_ID : `node-100${i + 1}`, host: h, hostname: `web-${i + 1}.corral.test`, nodenum: i + 1 }));
  const nodes = Object.fromEntries(
    members.map((m) => [m.id, { hostname: m.hostname, ipaddresses: { access_v4: m.host.ip }, nodenum: m.nodenum, hardwaretype: "s", imagetype: "d", services: ["web"], automators: ["ansible"] }]),
  );
  const reach = (i: number) => ({ "ssh-auth": { user: "root", key_resource: "node-key" }, ssh_host_keys: pins[i]! });
  const stepNodes = Object.fromEntries(members.map((m, i) => [m.id, reach(i)]));
  const taskOf = (i: number): TaskMessage => {
    const m = members[i]!;
    return { ...task({ hostname: m.hostname, ipaddresses: { access_v4: m.host.ip }, nodenum: m.nodenum, nodes, stepNodes, results: reach(i) }), nodeId: m.id };
  };
  return { members, taskOf };
}

/** A node's window of the rolling play, in ns, or undefined when the play did not reach it. */
async function windowOn(container: string): Promise<{ start: bigint; end: bigint } | undefined> {
  const text = (await dockerExec(container, ["sh", "-c", "cat /tmp/rolling-window 2>/dev/null; rm -f /tmp/rolling-window"])).stdout;
  const start = /^start (\d+)$/m.exec(text)?.[1];
  const end = /^end (\d+)$/m.exec(text)?.[1];
  return start && end ? { start: BigInt(start), end: BigInt(end) } : undefined;
}

serial("hosts: service: the first node's task plays every node of the step, one at a time with serial: 1; the others play nothing", async (t) => {
  const { members, taskOf } = rollingStep();
  const rolling = action("web/rolling.yml", { hosts: "service" });
  const [leader, ...followers] = await Promise.all(members.map((_, i) => ansible.runAction(pluginContext(taskOf(i), { workDir }), rolling)));
  t.is(leader!.status, 0, `${leader!.stdout}\n${leader!.stderr}`);
  for (const m of members) t.regex(leader!.stdout ?? "", new RegExp(`${m.hostname.replace(/\./g, "\\.")}\\s+: ok=1\\s+changed=1\\s+unreachable=0\\s+failed=0`));
  for (const f of followers) {
    t.is(f.status, 0);
    t.regex(f.stdout ?? "", /^ansible: played by the task of node web-1\.corral\.test \(node-0001\), which plays the 3 nodes of this step at once/);
  }
  const windows = await Promise.all(members.map((m) => windowOn(m.host.id)));
  for (const [i, w] of windows.entries()) {
    t.truthy(w, `${members[i]!.hostname} was played`);
    if (i > 0 && w && windows[i - 1]) t.true(w.start >= windows[i - 1]!.end, `${members[i]!.hostname} started after ${members[i - 1]!.hostname} ended`);
  }
  t.deepEqual(await leftInNodeDir(), [], "the leader's run files are removed");
  for (const m of members) {
    t.is((await dockerExec(m.host.id, ["sh", "-c", "grep -rlF -e '-----BEGIN OPENSSH PRIVATE KEY' /root /home /tmp /var/tmp /var/lib 2>/dev/null || true"])).stdout.trim(), "");
  }
});

serial("hosts: service: a node of the step presenting another key fails the leader's task, and serial stops the play there", async (t) => {
  const other = generateSshKeyPair();
  const { taskOf } = rollingStep([hostKeys, { "ssh-ed25519": other.publicKey.split(" ")[1]! }, peers[1]!.hostKeys]);
  const out = await ansible.runAction(pluginContext(taskOf(0), { workDir }), action("web/rolling.yml", { hosts: "service" }));
  t.not(out.status, 0);
  t.regex(out.stderr ?? "", /\[corral\] ansible: web-2\.corral\.test was unreachable at task "one node at a time": Failed to connect to the host via ssh: Host key verification failed\.$/m);
  t.truthy(await windowOn(host.id), "the first node was played");
  t.is(await windowOn(peers[0]!.host.id), undefined);
  t.is(await windowOn(peers[1]!.host.id), undefined, "the batch after the failed one is not played");
  t.deepEqual(await leftInNodeDir(), []);
});
