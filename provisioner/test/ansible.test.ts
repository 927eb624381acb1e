/**
 * The ansible automator's pieces (fields, inventory, variables, known_hosts, the failure summary) and real plays
 * of sim nodes: `connection: local` in the tenant's sandbox on this host, where one tenant's play cannot read
 * another tenant's playbooks.
 */
import test from "ava";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAnsible } from "@corral/deploy";
import type { TaskMessage } from "@corral/contracts";
import { createLocalSandbox, nodeDir, resourceDir, type ServiceActionCall } from "@corral/provisioner/sdk";
import { createAnsibleAutomator } from "../src/plugins/ansible/index.js";
import { readPlayFields } from "../src/plugins/ansible/fields.js";
import { stepNodeTask, stepPlay } from "../src/plugins/ansible/hosts.js";
import { buildInventory, corralVariables, knownHostsFile, playHost } from "../src/plugins/ansible/inventory.js";
import { failureSummary, playFailures } from "../src/plugins/ansible/outcome.js";
import { playRun, type PlayNode } from "../src/plugins/ansible/play.js";
import { taskMessage } from "./helpers.js";
import { pluginContext } from "./helpers/plugin-context.js";

const call = (fields: Record<string, string>): ServiceActionCall => ({ name: "INSTALL", service: "web", fields });

function clusterTask(overrides: Partial<TaskMessage> = {}): TaskMessage {
  const node = (hostname: string, ip: string, services: string[], nodenum: number) => ({
    hostname,
    ipaddresses: { access_v4: ip, bind_v4: ip.replace(/^192\.0\.2/, "10.0.0") },
    nodenum,
    hardwaretype: "small",
    imagetype: "debian",
    services,
    automators: ["ansible"],
  });
  return taskMessage({
    tenant: "t1",
    taskName: "INSTALL",
    nodeId: "n1",
    clusterId: "00000042",
    ...overrides,
    config: {
      ...node("web-1.example", "192.0.2.1", ["web", "base"], 1),
      cluster: { web: { port: 8080 }, peers: "db-1.example,db-2.example" },
      nodes: {
        n1: node("web-1.example", "192.0.2.1", ["web", "base"], 1),
        n2: node("db-1.example", "192.0.2.2", ["db", "base"], 2),
        n3: node("db-2.example", "192.0.2.3", ["db", "base", "all"], 3),
        n4: node("", "192.0.2.4", ["web"], 4),
      },
      provider: { name: "p", providertype: "docker", provisioner: { secret: "s3cret" } },
      results: {},
      ...overrides.config,
    },
  });
}

test("fields: playbook, tags, skip_tags, extra_vars, become, timeout_s and hosts", (t) => {
  const ok = readPlayFields(call({ playbook: "web/roles/site.yml", tags: "a, b,,c", skip_tags: "slow", extra_vars: '{"x": {"y": 1}}', become: "no", timeout_s: "90", hosts: "service" }));
  t.deepEqual(ok, { ok: true, value: { playbook: ["web", "roles", "site.yml"], tags: ["a", "b", "c"], skipTags: ["slow"], extraVars: { x: { y: 1 } }, become: false, timeoutSeconds: 90, hosts: "service" } });
  const defaults = readPlayFields(call({ playbook: "web/site.yml" }));
  t.true(defaults.ok && defaults.value.become && defaults.value.timeoutSeconds === 1800 && Object.keys(defaults.value.extraVars).length === 0);
  t.is(defaults.ok ? defaults.value.hosts : undefined, "node", "the play is limited to the task's node unless told otherwise");
  const odd = readPlayFields(call({ playbook: "_odd/site.yml" }));
  t.is(odd.ok ? odd.value.playbook[0] : "", "_5Fodd", "the archive's name becomes its path segment, as synced");
  const error = (fields: Record<string, string>) => {
    const r = readPlayFields(call(fields));
    return r.ok ? "" : r.error;
  };
  t.regex(error({}), /has no playbook field/);
  t.regex(error({ playbook: "/etc/site.yml" }), /must be a relative path/);
  t.regex(error({ playbook: "web/../../x.yml" }), /must be a relative path/);
  t.regex(error({ playbook: "site.yml" }), /names the archive and the file in it/);
  t.regex(error({ playbook: "web/site.yml", extra_vars: "{" }), /extra_vars is not valid JSON/);
  t.regex(error({ playbook: "web/site.yml", extra_vars: '"x"' }), /extra_vars must be a JSON object/);
  t.regex(error({ playbook: "web/site.yml", become: "sometimes" }), /become must be true or false/);
  t.regex(error({ playbook: "web/site.yml", timeout_s: "-1" }), /timeout_s must be a positive number/);
  t.regex(error({ playbook: "web/site.yml", hosts: "all" }), /hosts must be node or service, got "all"/);
});

const sshConnection = (host: string, port: number, user: string, i = 0) =>
  ({ kind: "ssh", host, port, user, keyFile: "/w/ansible-key.pem", controlPath: `run.d/m${i}` }) as const;

test("inventory: the node with its connection, every node with its addresses and services, a group per service", (t) => {
  const task = clusterTask();
  const inventory = buildInventory(task, { n1: sshConnection("192.0.2.1", 2222, "admin") }) as any;
  const hosts = inventory.all.hosts;
  t.deepEqual(Object.keys(hosts).sort(), ["db-1.example", "db-2.example", "n4", "web-1.example"], "a node without a hostname is named by its id");
  t.deepEqual(hosts["web-1.example"], {
    ansible_host: "192.0.2.1",
    ansible_connection: "ssh",
    ansible_port: 2222,
    ansible_user: "admin",
    ansible_ssh_private_key_file: "/w/ansible-key.pem",
    ansible_ssh_common_args: "-o ControlPath=run.d/m0",
    corral_node_id: "n1",
    corral_hostname: "web-1.example",
    corral_ipaddresses: { access_v4: "192.0.2.1", bind_v4: "10.0.0.1" },
    corral_services: ["web", "base"],
    corral_nodenum: 1,
  });
  t.deepEqual(hosts["db-1.example"], {
    ansible_host: "192.0.2.2",
    corral_node_id: "n2",
    corral_hostname: "db-1.example",
    corral_ipaddresses: { access_v4: "192.0.2.2", bind_v4: "10.0.0.2" },
    corral_services: ["db", "base"],
    corral_nodenum: 2,
  }, "other nodes carry no connection: the play never reaches them");
  t.deepEqual(inventory.all.children, {
    base: { hosts: { "db-1.example": null, "db-2.example": null, "web-1.example": null } },
    db: { hosts: { "db-1.example": null, "db-2.example": null } },
    web: { hosts: { n4: null, "web-1.example": null } },
  }, "no group named all: Ansible's own");
  t.is(playHost(task), "web-1.example");
  const withPython = buildInventory(task, { n1: { ...sshConnection("192.0.2.1", 22, "root"), python: "/usr/bin/python3" } }) as any;
  t.is(withPython.all.hosts["web-1.example"].ansible_python_interpreter, "/usr/bin/python3", "BOOTSTRAP's python3, when known");
  t.is(hosts["web-1.example"].ansible_python_interpreter, undefined);

  const local = buildInventory(clusterTask({ config: { nodes: undefined, nodesOmitted: true } as any }), { n1: { kind: "local" } }) as any;
  t.deepEqual(Object.keys(local.all.hosts), ["web-1.example"], "without the cluster's nodes, the node alone");
  t.is(local.all.hosts["web-1.example"].ansible_connection, "local");
  t.is(JSON.stringify(inventory).includes("s3cret"), false, "no provider field in the inventory");
});

/** A task of a `hosts: service` step of service db on n3, n2 and n4 (nodenums 3, 2, 4), as the clusters service makes it. */
function stepTask(nodeId: string, overrides: Partial<TaskMessage["config"]> = {}): TaskMessage {
  const base = clusterTask();
  const nodes = base.config.nodes!;
  const reach = (i: number) => ({ "ssh-auth": { user: "root", cluster_key: true }, ssh_host_keys: { "ssh-ed25519": `KEY${i}` } });
  return clusterTask({
    nodeId,
    config: {
      ...base.config,
      ...nodes[nodeId]!,
      nodes: { ...nodes, n2: { ...nodes["n2"]!, nodenum: 3 }, n3: { ...nodes["n3"]!, nodenum: 2 } },
      stepNodes: { n2: reach(2), n3: reach(3), n4: reach(4) },
      results: reach(Number(nodeId.slice(1))),
      ...overrides,
    },
  });
}

test("hosts: service: the task of the step's lowest nodenum plays every node of the step; the others say who played them", (t) => {
  t.deepEqual(stepPlay(stepTask("n3")), { role: "leader", nodeIds: ["n3", "n2", "n4"] }, "by nodenum, not by id");
  for (const follower of ["n2", "n4"]) {
    const step = stepPlay(stepTask(follower));
    t.is(step.role, "played");
    t.is(
      step.role === "played" ? step.note : "",
      "ansible: played by the task of node db-2.example (n3), which plays the 3 nodes of this step at once (hosts: service): db-2.example, db-1.example, n4\n",
    );
  }
  const refused = (task: TaskMessage) => {
    const step = stepPlay(task);
    return step.role === "refused" ? step.error : "";
  };
  t.regex(refused(stepTask("n3", { nodes: undefined, nodesOmitted: true })), /tasks of a cluster this large do not carry its nodes/);
  t.regex(refused(stepTask("n3", { stepNodes: undefined })), /needs the nodes of the task's step \(config\.stepNodes\)/);
  t.regex(refused(stepTask("n3", { stepNodes: { n3: {}, n9: {} } })), /node n9 of the step is not among the cluster's nodes/);

  const peer = stepNodeTask(stepTask("n3"), "n4");
  t.is(peer.nodeId, "n4");
  t.is(peer.config.hostname, "");
  t.deepEqual(peer.config.ipaddresses, { access_v4: "192.0.2.4", bind_v4: "10.0.0.4" });
  t.deepEqual(peer.config.results, { "ssh-auth": { user: "root", cluster_key: true }, ssh_host_keys: { "ssh-ed25519": "KEY4" } }, "its reach, not the leader's results");
  t.is(peer.config.provider.providertype, "docker", "the cluster's provider: its credential is resolved as the leader's own");
});

test("hosts: service: one run over every node of the step, each with its key, its pinned keys and its own master connection", (t) => {
  const task = stepTask("n3");
  const ssh = (host: string, user: string, privateKey: string): Extract<PlayNode["target"], { kind: "ssh" }> => ({ kind: "ssh", host, port: 22, user, privateKey, hostKeys: { "ssh-ed25519": `pin-${host}` } });
  const nodes: PlayNode[] = [
    { nodeId: "n3", target: { ...ssh("192.0.2.3", "root", "KEY-A"), python: "/usr/bin/python3" } },
    { nodeId: "n2", target: ssh("192.0.2.2", "root", "KEY-A") },
    { nodeId: "n4", target: ssh("192.0.2.4", "deploy", "KEY-B") },
  ];
  const fields = readPlayFields(call({ playbook: "db/rolling.yml", hosts: "service" }));
  if (!fields.ok) return t.fail(fields.error);
  const place = { nodeDir: "/work/t1/nodes/c/n3", resourceDir: (type: string) => `/work/t1/res/${type}`, collections: [] };
  const play = playRun(task, call({}), fields.value, place, nodes, { ansiblePlaybook: "/usr/bin/ansible-playbook", nssWrapper: undefined });
  const named = (kind: string) => play.files.filter((f) => f.path.includes(`/ansible-${kind}-`));
  t.deepEqual(named("key").map((f) => f.content), ["KEY-A"]);
  t.deepEqual(named("key2").map((f) => f.content), ["KEY-B"], "one key file per distinct key");
  t.is(named("known-hosts")[0]?.content, "192.0.2.3 ssh-ed25519 pin-192.0.2.3\n192.0.2.2 ssh-ed25519 pin-192.0.2.2\n192.0.2.4 ssh-ed25519 pin-192.0.2.4\n");
  const hosts = JSON.parse(named("inventory")[0]!.content).all.hosts;
  t.is(hosts["db-2.example"].ansible_ssh_private_key_file, named("key")[0]!.path);
  t.is(hosts["db-1.example"].ansible_ssh_private_key_file, named("key")[0]!.path);
  t.is(hosts["n4"].ansible_ssh_private_key_file, named("key2")[0]!.path);
  t.is(hosts["n4"].ansible_user, "deploy");
  t.is(hosts["db-2.example"].ansible_python_interpreter, "/usr/bin/python3");
  t.is(hosts["db-1.example"].ansible_python_interpreter, undefined, "a step node's python3 is discovered");
  t.is(hosts["web-1.example"].ansible_connection, undefined, "a node outside the step has no connection");
  const paths = ["db-2.example", "db-1.example", "n4"].map((h) => /ControlPath=(\S+)/.exec(hosts[h].ansible_ssh_common_args)?.[1]);
  t.is(new Set(paths).size, 3, "a master connection per node");
  for (const path of paths) t.true(play.command.includes(`-o ControlPath='${path}' `), "each opened before the play");
  t.regex(play.command, /'--limit' 'db-2\.example,db-1\.example,n4'/);
  t.regex(play.command, /'--become'/, "a login other than root among them: the play becomes root");
  t.false(play.env["ANSIBLE_SSH_ARGS"]?.includes("ControlPath"), "no ControlPath for every host");
  t.regex(play.env["ANSIBLE_SSH_ARGS"] ?? "", /StrictHostKeyChecking=yes/);
  t.false(play.command.includes("KEY-A") || JSON.stringify(play.env).includes("KEY-A"), "keys only in their files");
});

test("variables: corral_config and corral_task; known_hosts holds exactly the pinned keys", (t) => {
  t.deepEqual(corralVariables(clusterTask(), call({})), {
    corral_config: { web: { port: 8080 }, peers: "db-1.example,db-2.example" },
    corral_task: { name: "INSTALL", service: "web", cluster_id: "00000042", node_id: "n1", hostname: "web-1.example" },
  });
  const keys = { "ssh-ed25519": "AAAAC3NzaC1lZDI1NTE5AAAAIA==", "ecdsa-sha2-nistp256": "AAAAE2VjZHNh" };
  t.is(knownHostsFile("192.0.2.1", 22, keys), "192.0.2.1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==\n192.0.2.1 ecdsa-sha2-nistp256 AAAAE2VjZHNh\n");
  t.is(knownHostsFile("192.0.2.1", 2222, { "ssh-ed25519": "AAAA" }), "[192.0.2.1]:2222 ssh-ed25519 AAAA\n");
});

test("failure summary: the failed task's name and message; ignored failures are left out", (t) => {
  const stdout = [
    "PLAY [all] *********************************************************************",
    "",
    "TASK [Gathering Facts] *********************************************************",
    "ok: [web-1]",
    "",
    "TASK [probe] *******************************************************************",
    'fatal: [web-1]: FAILED! => {"changed": false, "msg": "probe failed"}',
    "...ignoring",
    "",
    "TASK [install packages] ********************************************************",
    'failed: [web-1] (item=nginx) => {"ansible_loop_var": "item", "changed": false, "item": "nginx", "msg": "No package matching \'nginx\' is available"}',
    "",
    "RUNNING HANDLER [restart app] **************************************************",
    'fatal: [web-1]: FAILED! => {"changed": true, "cmd": ["false"], "msg": "non-zero return code", "rc": 1, "stderr": "line one\\nthe reason", "stdout": ""}',
    "",
    "TASK [connect] *****************************************************************",
    'fatal: [web-1]: UNREACHABLE! => {"changed": false, "msg": "Failed to connect to the host via ssh: @@@@@@@\\n@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @\\nHost key verification failed.", "unreachable": true}',
    "",
    "PLAY RECAP *********************************************************************",
  ].join("\n");
  const failures = playFailures(stdout);
  t.deepEqual(failures, [
    { task: "install packages", host: "web-1", unreachable: false, message: "No package matching 'nginx' is available" },
    { task: "restart app", host: "web-1", unreachable: false, message: "non-zero return code: the reason" },
    { task: "connect", host: "web-1", unreachable: true, message: "Failed to connect to the host via ssh: Host key verification failed." },
  ]);
  t.is(
    failureSummary(failures),
    '[corral] ansible: task "install packages" failed on web-1: No package matching \'nginx\' is available\n' +
      '[corral] ansible: task "restart app" failed on web-1: non-zero return code: the reason\n' +
      '[corral] ansible: web-1 was unreachable at task "connect": Failed to connect to the host via ssh: Host key verification failed.\n',
  );
  t.deepEqual(playFailures("fatal: [h]: FAILED! => not json at all"), [{ task: "", host: "h", unreachable: false, message: "not json at all" }]);
});

// ---- Real plays of sim nodes, in the sandbox ----------------------------------------------------------------

let workDir: string;
test.before(async () => {
  await ensureAnsible();
  workDir = await mkdtemp(join(tmpdir(), "corral-ansible-local-"));
});
test.after.always(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const simTask = (tenant: string, overrides: Partial<TaskMessage["config"]> = {}) =>
  taskMessage({
    tenant,
    taskName: "CONFIGURE",
    nodeId: "sim-node",
    config: { hostname: "sim-1.local", services: ["app"], cluster: { app: { greeting: "hi" } }, ...overrides },
  });

async function writePlaybook(tenant: string, archive: string, file: string, content: string): Promise<string> {
  const dir = join(resourceDir(workDir, tenant, "automatortypes", "ansible", "playbooks"), archive);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, file), content);
  return join(dir, file);
}

test.serial("a sim node's play runs with connection local in its node directory, in the tenant's sandbox", async (t) => {
  const ansible = createAnsibleAutomator({ sandbox: createLocalSandbox() });
  await writePlaybook(
    "tenant-a",
    "app",
    "site.yml",
    `- hosts: app
  gather_facts: false
  tasks:
    - copy:
        dest: "{{ lookup('env', 'PWD') }}/greeting.txt"
        content: "{{ corral_config.app.greeting }} from {{ corral_task.name }} on {{ inventory_hostname }} as {{ lookup('pipe', 'id -u') }}\\n"
`,
  );
  const boot = await ansible.bootstrap(pluginContext(simTask("tenant-a"), { workDir }));
  t.is(boot.status, 0, boot.stderr);
  const out = await ansible.runAction(pluginContext(simTask("tenant-a"), { workDir }), { name: "CONFIGURE", service: "app", fields: { playbook: "app/site.yml" } });
  t.is(out.status, 0, `${out.stdout}\n${out.stderr}`);
  const dir = nodeDir(workDir, "tenant-a", "00000001", "sim-node");
  const written = await readFile(join(dir, "greeting.txt"), "utf8");
  t.regex(written, /^hi from CONFIGURE on sim-1\.local as (\d+)\n$/);
  t.not(written.match(/as (\d+)/)![1], "0", "the play runs as the tenant's user, not as root");
  t.deepEqual((await readdir(dir)).filter((f) => f.startsWith("ansible-")), [], "the run's files are removed");
});

test.serial("one tenant's play cannot read another tenant's playbooks", async (t) => {
  const ansible = createAnsibleAutomator({ sandbox: createLocalSandbox() });
  const secret = await writePlaybook("tenant-a", "private", "site.yml", "- hosts: all\n  tasks: []\n# tenant-a's secret\n");
  await writePlaybook(
    "tenant-b",
    "probe",
    "site.yml",
    `- hosts: all
  gather_facts: false
  tasks:
    - debug:
        msg: "{{ lookup('file', '${secret}') }}"
`,
  );
  const out = await ansible.runAction(pluginContext(simTask("tenant-b"), { workDir }), { name: "CONFIGURE", service: "app", fields: { playbook: "probe/site.yml" } });
  t.not(out.status, 0);
  t.false(`${out.stdout}${out.stderr}`.includes("tenant-a's secret"));
  t.regex(out.stderr ?? "", /\[corral\] ansible: task "debug" failed on sim-1\.local: .*(could not locate file|not found|Permission denied)/i);
});

test.serial("a play uses the tenant's synced roles and collections", async (t) => {
  const ansible = createAnsibleAutomator({ sandbox: createLocalSandbox() });
  const synced = (type: string) => resourceDir(workDir, "tenant-c", "automatortypes", "ansible", type);
  await mkdir(join(synced("roles"), "greet", "tasks"), { recursive: true });
  await writeFile(join(synced("roles"), "greet", "tasks", "main.yml"), "- copy:\n    dest: \"{{ lookup('env', 'PWD') }}/role.txt\"\n    content: \"from the role\\n\"\n");
  const collectionRole = join(synced("collections"), "kit", "ansible_collections", "corral", "demo", "roles", "hello", "tasks");
  await mkdir(collectionRole, { recursive: true });
  await writeFile(join(collectionRole, "main.yml"), "- copy:\n    dest: \"{{ lookup('env', 'PWD') }}/collection.txt\"\n    content: \"from the collection\\n\"\n");
  await writePlaybook(
    "tenant-c",
    "site",
    "main.yml",
    "- hosts: all\n  gather_facts: false\n  roles: [greet]\n  tasks:\n    - include_role:\n        name: corral.demo.hello\n",
  );
  const out = await ansible.runAction(pluginContext(simTask("tenant-c"), { workDir }), { name: "CONFIGURE", service: "app", fields: { playbook: "site/main.yml" } });
  t.is(out.status, 0, `${out.stdout}\n${out.stderr}`);
  const dir = nodeDir(workDir, "tenant-c", "00000001", "sim-node");
  t.is(await readFile(join(dir, "role.txt"), "utf8"), "from the role\n");
  t.is(await readFile(join(dir, "collection.txt"), "utf8"), "from the collection\n");
});

test.serial("hosts: service on sim nodes: the leader plays every node of the step (connection local), one at a time with serial: 1", async (t) => {
  const ansible = createAnsibleAutomator({ sandbox: createLocalSandbox() });
  await writePlaybook(
    "tenant-d",
    "app",
    "rolling.yml",
    `- hosts: app
  gather_facts: false
  serial: 1
  tasks:
    - shell: "echo start {{ inventory_hostname }} $(date +%s%N) >> windows.txt; sleep 0.3; echo end {{ inventory_hostname }} $(date +%s%N) >> windows.txt"
      args:
        chdir: "{{ lookup('env', 'PWD') }}"
`,
  );
  const info = (n: number) => ({ hostname: `sim-${n}.local`, ipaddresses: {}, nodenum: 1000 + n, hardwaretype: "small", imagetype: "debian", services: ["app"], automators: ["ansible"] });
  const nodes: Record<string, ReturnType<typeof info>> = { "sim-a": info(2), "sim-b": info(1), "sim-c": info(3) };
  const ids = Object.keys(nodes);
  const stepTask = (nodeId: string) =>
    taskMessage({ tenant: "tenant-d", taskName: "CONFIGURE", nodeId, config: { ...nodes[nodeId]!, nodes, stepNodes: Object.fromEntries(ids.map((id) => [id, {}])) } });
  const outs = await Promise.all(
    ids.map((id) => ansible.runAction(pluginContext(stepTask(id), { workDir }), { name: "CONFIGURE", service: "app", fields: { playbook: "app/rolling.yml", hosts: "service" } })),
  );
  const [a, leader, c] = outs;
  t.is(leader!.status, 0, `${leader!.stdout}\n${leader!.stderr}`);
  t.regex(leader!.stdout ?? "", /PLAY RECAP[\s\S]*sim-1\.local\s+: ok=1[\s\S]*sim-2\.local\s+: ok=1[\s\S]*sim-3\.local\s+: ok=1/);
  for (const follower of [a!, c!]) {
    t.is(follower.status, 0);
    t.is(follower.stdout, "ansible: played by the task of node sim-1.local (sim-b), which plays the 3 nodes of this step at once (hosts: service): sim-1.local, sim-2.local, sim-3.local\n");
  }
  const lines = (await readFile(join(nodeDir(workDir, "tenant-d", "00000001", "sim-b"), "windows.txt"), "utf8")).trim().split("\n").map((l) => l.split(" "));
  t.deepEqual(lines.map(([edge, host]) => `${edge} ${host}`), ["start sim-1.local", "end sim-1.local", "start sim-2.local", "end sim-2.local", "start sim-3.local", "end sim-3.local"], "in the leader's node directory, one host after the other");
  const times = lines.map(([, , ns]) => BigInt(ns!));
  for (let i = 1; i < times.length; i++) t.true(times[i]! >= times[i - 1]!, "windows do not overlap");
  for (const id of ["sim-a", "sim-c"]) t.deepEqual(await readdir(nodeDir(workDir, "tenant-d", "00000001", id)).catch(() => []), [], "nothing ran for the others");
});
