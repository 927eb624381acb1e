/**
 * The shell and chef-solo automators on a real machine: a container of the node image with sshd, reached over
 * SSH with a key from a synced `ssh_keys` resource and the host key pinned as CONFIRM would pin it.
 */
import test from "ava";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TaskMessage } from "@corral/contracts";
import { silentLogger } from "@corral/shared";
import {
  type AutomatorPlugin,
  createChefSoloAutomator,
  createShellAutomator,
  type PluginOutcome,
  resourceDir,
} from "@corral/provisioner";
import { generateSshKeyPair, type RemoteAccess, sshKeyFile, SshPool } from "@corral/provisioner/testing";
import { createTestNetwork, dockerExec, ensureDockerForTests, removeTestContainers, startSshHost, type SshHost, type TestNetwork } from "../../test/helpers/docker-hosts.js";
import { taskMessage } from "./helpers.js";
import { pluginContext } from "./helpers/plugin-context.js";

const serial = test.serial;
const TENANT = "remote-t1";
const PROVIDER = "static";
let workDir: string;
let network: TestNetwork;
let host: SshHost;
let pool: SshPool;
let access: RemoteAccess;
let shell: AutomatorPlugin;
let chef: AutomatorPlugin;
let hostKeys: Record<string, string>;

test.before(async () => {
  await ensureDockerForTests();
  workDir = await mkdtemp(join(tmpdir(), "corral-remote-"));
  const key = generateSshKeyPair();
  const keyFile = sshKeyFile(workDir, TENANT, PROVIDER, "node-key");
  await mkdir(join(keyFile, ".."), { recursive: true });
  await writeFile(keyFile, key.privateKey, { mode: 0o400 });
  network = await createTestNetwork(`corral-remote-${process.pid}`);
  host = await startSshHost({ network: network.name, authorizedKeys: key.publicKey });
  pool = new SshPool({ log: silentLogger });
  access = { pool, credentials: { workDir, clusterKeys: undefined } };
  shell = createShellAutomator({ remote: access });
  chef = createChefSoloAutomator({ remote: access });
  const presented = await pool.learnHostKey({ host: host.ip, port: 22, username: "root", privateKey: key.privateKey }, new AbortController().signal);
  hostKeys = { [presented.type]: presented.key };
});

test.after.always(async () => {
  await pool?.close();
  await host?.stop();
  await network?.remove();
  await removeTestContainers();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

function task(overrides: Partial<TaskMessage["config"]> = {}, taskName: TaskMessage["taskName"] = "START"): TaskMessage {
  return taskMessage({
    tenant: TENANT,
    taskName,
    config: {
      provider: { name: "pool1", providertype: PROVIDER, provisioner: { secret_field: "provider-secret" } },
      ipaddresses: { access_v4: host.ip, bind_v4: host.ip },
      results: { "ssh-auth": { user: "root", key_resource: "node-key" }, ssh_host_keys: hostKeys },
      ...overrides,
    },
  });
}

const action = (script: string, args = "", extra: Record<string, string> = {}) => ({
  name: "START" as const,
  service: "svc",
  fields: { script, args, ...extra },
});

const onNode = async (cmd: string) => (await dockerExec(host.id, ["sh", "-c", cmd])).stdout;

const scriptsDir = () => resourceDir(workDir, TENANT, "automatortypes", "shell", "scripts");

serial("shell BOOTSTRAP copies the synced scripts and archives, then only what changed", async (t) => {
  await mkdir(scriptsDir(), { recursive: true });
  await writeFile(join(scriptsDir(), "hello.sh"), "#!/bin/sh\necho \"hello from $(hostname) for $CORRAL_SERVICE\"\n", { mode: 0o755 });
  await writeFile(join(scriptsDir(), "other.sh"), "#!/bin/sh\necho other\n", { mode: 0o755 });
  const archive = join(resourceDir(workDir, TENANT, "automatortypes", "shell", "archives"), "site");
  await mkdir(archive, { recursive: true });
  await writeFile(join(archive, "index.html"), "<h1>site</h1>\n");

  const first = await shell.bootstrap(pluginContext(task({}, "BOOTSTRAP"), { workDir }));
  t.is(first.status, 0, first.stderr);
  t.regex(first.stdout ?? "", /shell scripts: 2 sent, 0 removed, 0 unchanged/);
  t.regex(first.stdout ?? "", /shell archives: 1 sent/);
  t.is(await onNode("cat /var/lib/corral/resources/shell/archives/site/index.html"), "<h1>site</h1>\n");
  t.is((await onNode("stat -c %a /var/lib/corral/resources/shell/scripts/hello.sh")).trim(), "755");
  t.is((await onNode("stat -c %a /var/lib/corral/work /var/lib/corral/run")).trim(), "755\n700", "BOOTSTRAP made the work directories");

  const again = await shell.bootstrap(pluginContext(task({}, "BOOTSTRAP"), { workDir }));
  t.regex(again.stdout ?? "", /shell scripts: 0 sent, 0 removed, 2 unchanged/, "an unchanged resource is not sent again");

  await writeFile(join(scriptsDir(), "other.sh"), "#!/bin/sh\necho other v2\n", { mode: 0o755 });
  await rm(join(archive, "index.html"));
  const changed = await shell.bootstrap(pluginContext(task({}, "BOOTSTRAP"), { workDir }));
  t.regex(changed.stdout ?? "", /shell scripts: 1 sent, 0 removed, 1 unchanged/);
  t.regex(changed.stdout ?? "", /shell archives: 0 sent, 1 removed/);
  t.is(await onNode("cat /var/lib/corral/resources/shell/scripts/other.sh"), "#!/bin/sh\necho other v2\n");
});

serial("a shell action runs on the node with the synced scripts on its PATH, the task file and the environment", async (t) => {
  const probe =
    'hello.sh; echo "file=$(python3 -c "import json,os; print(json.load(open(os.environ[\'CORRAL_TASK_FILE\']))[\'taskId\'])")"; ' +
    'echo "node=$CORRAL_NODE_ID ip=$CORRAL_IP pwd=$(pwd) user=$(id -un)"; stat -c %a "$CORRAL_TASK_FILE"';
  const theTask = task();
  const out = await shell.runAction(pluginContext(theTask, { workDir }), action(probe));
  t.is(out.status, 0, out.stderr);
  const hostname = (await onNode("hostname")).trim();
  t.true(out.stdout!.includes(`hello from ${hostname} for svc`), out.stdout);
  t.true(out.stdout!.includes(`file=${theTask.taskId}`));
  t.true(out.stdout!.includes(`node=${theTask.nodeId} ip=${host.ip} pwd=/var/lib/corral/work user=root`));
  t.true(out.stdout!.includes("\n600\n"), "the task file is readable by root only");
  t.is(await onNode("ls -A /var/lib/corral/run"), "", "the task file (it holds provider fields) is gone after the action");
});

serial("a failing action reports its exit code and output", async (t) => {
  const out = await shell.runAction(pluginContext(task(), { workDir }), action("echo partial; echo broken >&2; exit 7"));
  t.is(out.status, 7);
  t.is(out.stdout, "partial\n");
  t.is(out.stderr, "broken\n");
});

serial("an action's timeout kills its remote process group and removes the task file", async (t) => {
  const started = Date.now();
  const out = await shell.runAction(pluginContext(task(), { workDir }), action("(sleep 600) & sleep 601", "", { timeout_s: "1" }));
  t.is(out.status, 1);
  t.regex(out.stderr ?? "", /timed out after 1 s; its remote process group was killed/);
  t.true(Date.now() - started < 15_000);
  t.is((await onNode("pgrep -f 'sleep 60[01]' || true")).trim(), "", "no process of the action survives");
  t.is(await onNode("ls -A /var/lib/corral/run"), "");
});

serial("a node without a pinned host key, address or key is refused before anything runs", async (t) => {
  const noKey = await shell.runAction(pluginContext(task({ results: { "ssh-auth": { user: "root", key_resource: "node-key" } } }), { workDir }), action("true"));
  t.is(noKey.status, 1);
  t.regex(noKey.stderr ?? "", /no pinned host key/);
  const noAddress = await shell.runAction(pluginContext(task({ ipaddresses: {} }), { workDir }), action("true"));
  t.regex(noAddress.stderr ?? "", /has no address yet/);
  const missing = await shell.runAction(
    pluginContext(task({ results: { "ssh-auth": { user: "root", key_resource: "absent" }, ssh_host_keys: hostKeys } }), { workDir }),
    action("true"),
  );
  t.regex(missing.stderr ?? "", /ssh_keys resource absent of provider type static is not synced/);
});

serial("chef-solo: BOOTSTRAP needs chef-solo on the node, copies cookbooks; an action runs it with its config", async (t) => {
  const missing = await chef.bootstrap(pluginContext(task({}, "BOOTSTRAP"), { workDir }));
  t.is(missing.status, 1);
  t.regex(missing.stderr ?? "", /chef-solo is not installed on/);

  // A stand-in chef-solo that records how it was called and what its config and attributes said.
  await onNode(
    "printf '%s\\n' '#!/bin/sh' 'echo \"args: $*\"' 'while [ $# -gt 0 ]; do case $1 in -c) cat \"$2\";; -j) cat \"$2\"; echo;; esac; shift; done' > /usr/local/bin/chef-solo && chmod 755 /usr/local/bin/chef-solo",
  );
  const cookbook = join(resourceDir(workDir, TENANT, "automatortypes", "chef-solo", "cookbooks"), "demo", "recipes");
  await mkdir(cookbook, { recursive: true });
  await writeFile(join(cookbook, "default.rb"), "log 'demo'\n");
  const boot = await chef.bootstrap(pluginContext(task({}, "BOOTSTRAP"), { workDir }));
  t.is(boot.status, 0, boot.stderr);
  t.is(await onNode("cat /var/lib/corral/resources/chef-solo/cookbooks/demo/recipes/default.rb"), "log 'demo'\n");

  const out: PluginOutcome = await chef.runAction(pluginContext(task({ cluster: { app: { port: 8080 } } }), { workDir }), {
    name: "START",
    service: "svc",
    fields: { run_list: "recipe[demo]", json_attributes: '{"svc": {"x": 1}}' },
  });
  t.is(out.status, 0, out.stderr);
  t.regex(out.stdout ?? "", /args: --no-color -c \/var\/lib\/corral\/run\/chef-.+\.rb -j \/var\/lib\/corral\/run\/chef-.+\.json -o recipe\[demo\]/);
  t.regex(out.stdout ?? "", /cookbook_path \['\/var\/lib\/corral\/resources\/chef-solo\/cookbooks'\]/);
  t.regex(out.stdout ?? "", /"app":\{"port":8080\},"svc":\{"x":1\}/);
  t.is(await onNode("ls -A /var/lib/corral/run"), "", "attributes and config are removed after the run");
});

serial("a changed host key fails the action with a clear message; nothing runs", async (t) => {
  await onNode("rm -f /etc/ssh/ssh_host_* && ssh-keygen -A >/dev/null && kill -HUP 1");
  await new Promise((r) => setTimeout(r, 1000));
  const fresh = new SshPool({ log: silentLogger });
  try {
    const plugin = createShellAutomator({ remote: { pool: fresh, credentials: access.credentials } });
    const out = await plugin.runAction(pluginContext(task(), { workDir }), action("touch /tmp/should-not-exist"));
    t.is(out.status, 1);
    t.regex(out.stderr ?? "", /host key of .+ changed: it presented .+ but CONFIRM pinned/);
    t.is(await onNode("ls /tmp/should-not-exist 2>/dev/null || true"), "");
  } finally {
    await fresh.close();
  }
});
