/**
 * Local actions (sim nodes) of two tenants on one provisioner: each tenant's actions run in its own sandbox and
 * cannot read or write the other tenant's resources and work files, nor the provisioner's own files, and
 * timeouts and aborts still kill everything an action started. Real nats-server, real resource sync, real
 * processes; run as root (CI), the provisioner gives every tenant a user of its own in a mount namespace; the
 * user-namespace mode (what a provisioner not run as root uses) is checked on the same files.
 */
import { execFile } from "node:child_process";
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { Objm } from "@nats-io/obj";
import { startNats, type NatsHandle } from "@corral/deploy";
import { buckets, kvKey, objectStores, type TaskMessage } from "@corral/contracts";
import {
  connectNats,
  ensureStreams,
  openBucket,
  putValue,
  silentLogger,
} from "@corral/shared";
import {
  type AutomatorPlugin,
  createShellAutomator,
  createSimProvider,
  nodeDir,
  resourceDir,
  type RunningProvisioner,
  startProvisioner,
  tenantDir,
} from "@corral/provisioner";
import { createLocalSandbox, type LocalSandbox, SANDBOX_ID_BASE, SANDBOX_ID_COUNT } from "@corral/provisioner/testing";
import { assign, eventually, publishTask, taskMessage, uniqueName, waitResult } from "./helpers.js";
import { pluginContext } from "./helpers/plugin-context.js";

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;

const SECRETS = {
  script: "A-SCRIPT-SECRET-5e1f",
  archive: "A-ARCHIVE-SECRET-77c2",
  work: "A-WORK-SECRET-90ab",
  credentials: "PROVISIONER-CREDENTIALS-SECRET-31d4",
  config: "PROVISIONER-CONFIG-SECRET-c0de",
  env: "PROVISIONER-ENV-SECRET-4a4a",
};

interface Context {
  nats: NatsHandle;
  nc: NatsConnection;
  workDir: string;
  /** Stands for the provisioner's data directory (credentials) and its config file: world-readable on purpose. */
  privateDir: string;
  configFile: string;
  /** World-writable: A's scripts named like the sandbox's tools record here who ran them. */
  trapDir: string;
  sandbox: LocalSandbox;
  provisioner: RunningProvisioner;
  a: string;
  b: string;
  /** Tenant A's node, after A's action ran. */
  aNode: { clusterId: string; nodeId: string };
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  // The provisioner's environment must never reach an action.
  process.env["CORRAL_TEST_PROVISIONER_SECRET"] = SECRETS.env;
  t.context.nats = await startNats({ jetstream: true, syncAlways: false });
  t.context.nc = await connectNats({ url: t.context.nats.url, name: "provisioner-sandbox-test" });
  await ensureStreams(t.context.nc);
  t.context.workDir = await mkdtemp(join(tmpdir(), "corral-prov-sandbox-"));
  t.context.privateDir = await mkdtemp(join(tmpdir(), "corral-prov-private-"));
  await chmod(t.context.privateDir, 0o755);
  await writeFile(join(t.context.privateDir, "credentials"), SECRETS.credentials, { mode: 0o644 });
  const configDir = await mkdtemp(join(tmpdir(), "corral-prov-config-"));
  await chmod(configDir, 0o755);
  t.context.configFile = join(configDir, "corral.properties");
  await writeFile(t.context.configFile, `secret=${SECRETS.config}\n`, { mode: 0o644 });
  t.context.sandbox = createLocalSandbox({ privatePaths: [t.context.privateDir, t.context.configFile] });
  t.context.trapDir = await mkdtemp(join(tmpdir(), "corral-prov-trap-"));
  await chmod(t.context.trapDir, 0o777);
  t.context.a = uniqueName("tenant-a");
  t.context.b = uniqueName("tenant-b");
  await publishResources(t.context.nc, t.context.a, t.context.trapDir);
  t.context.provisioner = await startProvisioner({
    nc: t.context.nc,
    log: silentLogger,
    id: uniqueName("prov"),
    capacity: 4,
    workDir: t.context.workDir,
    sandbox: t.context.sandbox,
    plugins: [createSimProvider(), createShellAutomator({ sandbox: t.context.sandbox })],
    pullExpiresMs: 1000,
  });
  await assign(t.context.nc, t.context.provisioner.id, { [t.context.a]: 2, [t.context.b]: 2 });
  const tool = join(resourceDir(t.context.workDir, t.context.a, "automatortypes", "shell", "scripts"), "a-tool.sh");
  await eventually(async () => (await stat(tool).catch(() => undefined)) !== undefined, { what: "tenant A's resources synced" });
});

test.after.always(async (t) => {
  delete process.env["CORRAL_TEST_PROVISIONER_SECRET"];
  await t.context.provisioner?.stop();
  await t.context.nc?.drain();
  await t.context.nats?.stop();
  await rm(t.context.workDir, { recursive: true, force: true });
  await rm(t.context.privateDir, { recursive: true, force: true });
  await rm(t.context.trapDir, { recursive: true, force: true });
  if (t.context.configFile) await rm(join(t.context.configFile, ".."), { recursive: true, force: true });
});

/** Scripts named like the tools the sandbox itself runs: on the action's PATH, they must never run in its place. */
const TRAPS = ["mount", "mkdir", "setpriv", "unshare", "sh"];

/**
 * Tenant A's active set: a script (`scripts`, 0755), the trap scripts, and an archive whose only file is mode
 * 0600.
 */
async function publishResources(nc: NatsConnection, tenant: string, trapDir: string): Promise<void> {
  const staging = await mkdtemp(join(tmpdir(), "corral-prov-archive-"));
  try {
    await mkdir(join(staging, "a-data"));
    await writeFile(join(staging, "a-data", "secret.txt"), `${SECRETS.archive}\n`, { mode: 0o600 });
    await run("tar", ["-cf", join(staging, "a-data.tar"), "-C", staging, "a-data"]);
    const store = await new Objm(nc).create(objectStores.pluginResources);
    const script = `obj-${uniqueName("script")}`;
    const archive = `obj-${uniqueName("archive")}`;
    await store.putBlob({ name: script }, new TextEncoder().encode(`#!/bin/sh\necho ${SECRETS.script}\n`));
    await store.putBlob({ name: archive }, await readFile(join(staging, "a-data.tar")));
    const traps = [];
    for (const name of TRAPS) {
      const object = `obj-${uniqueName(name)}`;
      await store.putBlob({ name: object }, new TextEncoder().encode(`#!/bin/sh\nid -u > ${trapDir}/${name}-ran-as\nexec /usr/bin/${name} "$@"\n`));
      traps.push({ name, version: 1, object });
    }
    await putValue(await openBucket(nc, buckets.pluginActive), kvKey(tenant), {
      generation: 1,
      automatortypes: {
        shell: {
          scripts: { format: "file", permissions: "0755", active: [{ name: "a-tool.sh", version: 1, object: script }, ...traps] },
          archives: { format: "archive", active: [{ name: "a-data", version: 1, object: archive }] },
        },
      },
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

const shellTask = (tenant: string, script: string, extra: Partial<TaskMessage> = {}, fields: Record<string, string> = {}) =>
  taskMessage({
    tenant,
    taskName: "INSTALL",
    ...extra,
    config: { services: ["web"], automators: ["shell"], service: { name: "web", action: { type: "shell", fields: { script, ...fields } } } },
  });

async function runTask(t: { context: Context }, task: TaskMessage) {
  await publishTask(t.context.nc, task);
  return waitResult(t.context.nc, task, 20_000);
}

/** Runs tenant A's action once (serially first): it reads its own resources and leaves a file in its node's directory. */
async function aRan(t: { context: Context }): Promise<{ clusterId: string; nodeId: string }> {
  if (t.context.aNode) return t.context.aNode;
  const task = shellTask(t.context.a, `a-tool.sh && cat "$CORRAL_ARCHIVES/a-data/secret.txt" && echo ${SECRETS.work} > work.txt && echo A-OK`);
  const result = await runTask(t, task);
  if (result.status !== 0 || !result.stdout?.includes("A-OK")) throw new Error(`tenant A's action failed: ${JSON.stringify(result)}`);
  return (t.context.aNode = { clusterId: task.clusterId, nodeId: task.nodeId });
}

/** Everything of A's and of the provisioner's that B's script tries to read (what -> path), list or write. */
interface Targets {
  reads: Record<string, string>;
  lists: string[];
  writes: string[];
}

function targets(t: { context: Context }, aNode: { clusterId: string; nodeId: string }): Targets {
  const { workDir, a } = t.context;
  const aNodeDir = nodeDir(workDir, a, aNode.clusterId, aNode.nodeId);
  return {
    reads: {
      "A's script (synced resource)": join(resourceDir(workDir, a, "automatortypes", "shell", "scripts"), "a-tool.sh"),
      "A's archive file": join(resourceDir(workDir, a, "automatortypes", "shell", "archives"), "a-data", "secret.txt"),
      "A's work file": join(aNodeDir, "work.txt"),
      "provisioner credentials": join(t.context.privateDir, "credentials"),
      "sandbox uid claims": join(workDir, ".sandbox", "ids"),
      "provisioner environment": `/proc/${process.pid}/environ`,
    },
    lists: [workDir, tenantDir(workDir, a), join(tenantDir(workDir, a), ".resources"), aNodeDir, t.context.privateDir],
    writes: [
      workDir,
      tenantDir(workDir, a),
      join(tenantDir(workDir, a), "nodes"),
      aNodeDir,
      resourceDir(workDir, a, "automatortypes", "shell", "scripts"),
      t.context.privateDir,
    ],
  };
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * B's script: every read prints what it got (so a leak shows in the output), then READ-DENIED or READ-ALLOWED;
 * the environment of every process it can see is searched for the provisioner's secret. Error messages go to
 * /dev/null: results keep only the last 2048 characters of each stream.
 */
function attackScript(tg: Targets, configFile: string): string {
  const lines = ["set +e", "exec 2>/dev/null"];
  for (const [what, path] of Object.entries(tg.reads)) {
    const read = `if [ -d ${q(path)} ]; then ls -la ${q(path)}; else cat ${q(path)}; fi`;
    lines.push(`if ${read}; then echo "READ-ALLOWED ${what}"; else echo "READ-DENIED ${what}"; fi`);
  }
  lines.push(`cat ${q(configFile)}`);
  for (const dir of tg.lists) lines.push(`ls -a ${q(dir)} | sed 's/^/  entry: /'`);
  for (const dir of tg.writes) lines.push(`touch ${q(join(dir, "pwned-by-b"))}; mkdir ${q(join(dir, "pwned-dir-by-b"))}`);
  lines.push(
    `env | grep -F ${q(SECRETS.env)}`,
    `for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f" | grep -F ${q(SECRETS.env)}; tr '\\0' '\\n' < "$f" | grep -q '^CORRAL_TENANT=' && echo SWEEP-SAW-OWN; done`,
    "echo B-OWN > mine.txt && cat mine.txt",
  );
  return lines.join("\n");
}

/** What every attack must end with: nothing leaked, nothing written. */
async function assertContained(
  t: ExecutionContext<Context>,
  out: { stdout?: string; stderr?: string },
  tg: Targets,
  secrets: readonly string[] = Object.values(SECRETS),
) {
  const output = `${out.stdout ?? ""}\n${out.stderr ?? ""}`;
  for (const secret of secrets) t.false(output.includes(secret), `${secret} leaked into B's output`);
  for (const what of Object.keys(tg.reads)) t.true(out.stdout?.includes(`READ-DENIED ${what}`), `B could read ${what}:\n${out.stdout}`);
  const entries = (out.stdout ?? "").split("\n").filter((l) => l.startsWith("  entry: ")).map((l) => l.slice("  entry: ".length));
  t.false(entries.includes(t.context.a), "B listed tenant A's directory");
  t.false(entries.some((e) => e === "credentials" || e === ".resources" || e === "work.txt" || e === "nodes"), `B listed: ${entries.join(", ")}`);
  t.true(out.stdout?.includes("B-OWN"), `B's own directory is usable:\n${out.stdout}\n${out.stderr}`);
  t.true(out.stdout?.includes("SWEEP-SAW-OWN"), "the environment sweep reads B's own processes");
  for (const dir of tg.writes) {
    const left = (await readdir(dir)).filter((e) => e.includes("pwned"));
    t.deepEqual(left, [], `B wrote into ${dir}`);
  }
}

test.serial("tenant A's own action reads its synced resources (a 0600 archive file included) and writes its node directory", async (t) => {
  const { clusterId, nodeId } = await aRan(t);
  const dir = nodeDir(t.context.workDir, t.context.a, clusterId, nodeId);
  t.is((await readFile(join(dir, "work.txt"), "utf8")).trim(), SECRETS.work);
  t.deepEqual(await readdir(t.context.trapDir), [], "the sandbox ran a tool from the tenant's scripts");
  if (!isRoot) return t.pass("not root: no tenant users to check");
  const node = await stat(dir);
  t.true(node.uid >= SANDBOX_ID_BASE && node.uid < SANDBOX_ID_BASE + SANDBOX_ID_COUNT, `node directory owned by ${node.uid}`);
  t.is(node.mode & 0o777, 0o700);
  const tenant = await stat(tenantDir(t.context.workDir, t.context.a));
  t.deepEqual([tenant.uid, tenant.gid, tenant.mode & 0o777], [0, node.uid, 0o750], "tenant directory: root's, A's group may read");
  t.is((await stat(t.context.workDir)).mode & 0o777, 0o711, "work directory: nobody lists it");
  t.is((await stat(join(dir, "work.txt"))).uid, node.uid, "A's files are A's user's");
});

test.serial("tenant B's action reads, lists and writes nothing of A's or of the provisioner's (tenant users)", async (t) => {
  const tg = targets(t, await aRan(t));
  const result = await runTask(t, shellTask(t.context.b, attackScript(tg, t.context.configFile)));
  t.is(result.status, 0, result.stderr);
  await assertContained(t, result, tg);
  if (isRoot) {
    t.deepEqual((await t.context.sandbox.isolation()).mode, "tenant-user");
    const a = (await stat(tenantDir(t.context.workDir, t.context.a))).gid;
    const b = (await stat(tenantDir(t.context.workDir, t.context.b))).gid;
    t.not(a, b, "each tenant has a user of its own");
  }
});

test.serial("the same attack fails in a user namespace (the mode of a provisioner not run as root)", async (t) => {
  const tg = targets(t, await aRan(t));
  const sandbox = createLocalSandbox({ isolation: { mode: "user-namespace", namespace: true }, privatePaths: [t.context.privateDir, t.context.configFile] });
  const shell = createShellAutomator({ sandbox });
  const out = await shell.runAction(pluginContext(shellTask(t.context.b, "x"), { workDir: t.context.workDir }), {
    name: "INSTALL",
    service: "web",
    fields: { script: attackScript(tg, t.context.configFile) },
  });
  t.is(out.status, 0, out.stderr);
  await assertContained(t, out, tg);
});

test("a provisioner not run as root finds user namespaces and keeps tenants apart with them", async (t) => {
  const workDir = await mkdtemp(join(tmpdir(), "corral-prov-nonroot-"));
  t.teardown(() => rm(workDir, { recursive: true, force: true }));
  const fixture = join(import.meta.dirname, "fixtures", "sandbox-cross-read.ts");
  const node = [process.execPath, "--import=tsx", fixture, workDir];
  // As root, the fixture runs as nobody (65534), owning its work directory; otherwise as this user.
  if (isRoot) await run("chown", ["65534:65534", workDir]);
  const argv = isRoot ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", ...node] : node;
  const { stdout } = await run(argv[0]!, argv.slice(1), { env: { ...process.env, HOME: workDir }, timeout: 60_000 });
  const report = JSON.parse(stdout.trim().split("\n").pop()!);
  t.not(report.uid, 0);
  t.deepEqual(report.isolation, { mode: "user-namespace", namespace: true });
  t.is(report.a.stdout, "A-SECRET-FROM-NON-ROOT\n", "A reads its own file");
  t.false(`${report.b.stdout}${report.b.stderr}`.includes("A-SECRET"), "B does not");
  t.deepEqual(report.b.stdout.split("\n").filter(Boolean).sort(), [".", "..", "b"], "B sees no other tenant in the work directory");
});

test.serial("with tenant users alone (no mount namespace), file modes keep B from A's files", async (t) => {
  if (!isRoot) return t.pass("not root: no tenant users");
  const all = targets(t, await aRan(t));
  // Nothing is hidden in this mode: the provisioner's own files are left to their modes (docs/security.md,
  // Actions on the provisioner host), so only A's are tried.
  const reads = Object.fromEntries(Object.entries(all.reads).filter(([what]) => what !== "provisioner credentials"));
  const tg = { reads, lists: all.lists.filter((d) => d !== t.context.privateDir), writes: all.writes.filter((d) => d !== t.context.privateDir) };
  const shell = createShellAutomator({ sandbox: createLocalSandbox({ isolation: { mode: "tenant-user", namespace: false } }) });
  const out = await shell.runAction(pluginContext(shellTask(t.context.b, "x"), { workDir: t.context.workDir }), {
    name: "INSTALL",
    service: "web",
    fields: { script: attackScript(tg, "/dev/null") },
  });
  t.is(out.status, 0, out.stderr);
  await assertContained(t, out, tg, [SECRETS.script, SECRETS.archive, SECRETS.work, SECRETS.env]);
});

test.serial("control: without a sandbox the same script finds A's and the provisioner's secrets", async (t) => {
  const tg = targets(t, await aRan(t));
  const workDir = t.context.workDir;
  // A throwaway claim file lets the unsandboxed mode run B (it lets one tenant only); removed afterwards.
  const claim = join(workDir, ".sandbox", "unsandboxed-tenant");
  t.teardown(() => rm(claim, { force: true }));
  const shell = createShellAutomator({
    sandbox: createLocalSandbox({ isolation: { mode: "unsandboxed", namespace: false }, unsandboxedOwnerFile: claim }),
  });
  const out = await shell.runAction(pluginContext(shellTask(t.context.b, "x"), { workDir }), {
    name: "INSTALL",
    service: "web",
    fields: { script: `${attackScript(tg, t.context.configFile)}; rm -rf ${tg.writes.map((d) => `${q(d)}/pwned*`).join(" ")}` },
  });
  for (const secret of [SECRETS.script, SECRETS.archive, SECRETS.work, SECRETS.credentials, SECRETS.config, SECRETS.env]) {
    t.true(out.stdout?.includes(secret), `${secret} found`);
  }
});

test.serial("a link planted where the task file goes is replaced, never written through", async (t) => {
  const shell = createShellAutomator({ sandbox: t.context.sandbox });
  const task = shellTask(t.context.b, "true");
  const box = await t.context.sandbox.forActions(t.context.workDir, t.context.b);
  if ("refused" in box) return t.fail(box.refused);
  const dir = await box.nodeDir(task.clusterId, task.nodeId);
  const victimDir = await mkdtemp(join(tmpdir(), "corral-prov-victim-"));
  t.teardown(() => rm(victimDir, { recursive: true, force: true }));
  const victim = join(victimDir, "victim");
  await writeFile(victim, "ORIGINAL");
  const taskFile = join(dir, `task-${task.taskId}-${task.dispatch}.json`);
  await symlink(victim, taskFile);
  const out = await shell.runAction(pluginContext(task, { workDir: t.context.workDir }), { name: "INSTALL", service: "web", fields: { script: 'cat "$CORRAL_TASK_FILE"' } });
  t.is(out.status, 0, out.stderr);
  t.deepEqual(JSON.parse(out.stdout!), task);
  t.is(await readFile(victim, "utf8"), "ORIGINAL");
  await t.throwsAsync(lstat(taskFile), { code: "ENOENT" }, "the task file is removed afterwards");
});

test.serial("a node directory made before sandboxing (root's) is handed to the tenant's user, links not followed", async (t) => {
  if (!isRoot) return t.pass("not root: no tenant users");
  const task = shellTask(t.context.b, "x");
  const dir = nodeDir(t.context.workDir, t.context.b, task.clusterId, task.nodeId);
  await mkdir(join(dir, "chef-cache", "deep"), { recursive: true });
  await writeFile(join(dir, "chef-cache", "deep", "old.txt"), "old\n");
  const outside = join(t.context.trapDir, "not-the-tenants");
  await writeFile(outside, "root's");
  await symlink(outside, join(dir, "link-out"));
  const shell = createShellAutomator({ sandbox: t.context.sandbox });
  const out = await shell.runAction(pluginContext(task, { workDir: t.context.workDir }), {
    name: "INSTALL",
    service: "web",
    fields: { script: "echo new >> chef-cache/deep/old.txt && cat chef-cache/deep/old.txt" },
  });
  t.is(out.status, 0, out.stderr);
  t.is(out.stdout, "old\nnew\n");
  const uid = (await stat(dir)).uid;
  t.not(uid, 0);
  t.is((await stat(join(dir, "chef-cache", "deep"))).uid, uid);
  t.is((await lstat(join(dir, "link-out"))).uid, uid);
  t.is((await stat(outside)).uid, 0, "the link's target keeps its owner");
  await rm(outside);
});

/** Pids of processes whose command line contains `token`. */
async function processesWith(token: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(token)) pids.push(Number(entry));
  }
  return pids;
}

const isolations: Array<[string, () => LocalSandbox]> = [
  ["detected", () => createLocalSandbox()],
  ...(isRoot ? [["tenant user without namespace", () => createLocalSandbox({ isolation: { mode: "tenant-user", namespace: false } })] as [string, () => LocalSandbox]] : []),
  ["user-namespace", () => createLocalSandbox({ isolation: { mode: "user-namespace", namespace: true } })],
];

for (const [name, make] of isolations) {
  for (const how of ["timeout", "abort"] as const) {
    test.serial(`a ${how} kills everything the sandboxed action started (${name})`, async (t) => {
      const shell: AutomatorPlugin = createShellAutomator({ sandbox: make() });
      // Unique durations name the processes: none may be left afterwards.
      const token = `${Math.floor(Math.random() * 1e6)}`;
      const task = shellTask(t.context.b, "x");
      const abort = new AbortController();
      const script = `touch started; (sleep 2.${token}; touch late) & sleep 30.${token}`;
      const started = Date.now();
      const running = shell.runAction(pluginContext(task, { workDir: t.context.workDir, signal: abort.signal }), {
        name: "INSTALL",
        service: "web",
        fields: { script, ...(how === "timeout" ? { timeout_s: "1" } : {}) },
      });
      if (how === "abort") setTimeout(() => abort.abort(), 1000);
      const out = await running;
      t.is(out.status, 1);
      t.true(Date.now() - started < 6_000, `took ${Date.now() - started} ms`);
      if (how === "timeout") t.regex(out.stderr ?? "", /timed out after 1 s/);
      const dir = nodeDir(t.context.workDir, t.context.b, task.clusterId, task.nodeId);
      await stat(join(dir, "started"));
      await eventually(async () => (await processesWith(token)).length === 0, { what: "no process of the action left", timeoutMs: 5_000 });
      await new Promise((r) => setTimeout(r, 2_500));
      await t.throwsAsync(stat(join(dir, "late")), undefined, "the background child was killed too");
    });
  }
}

test("without any sandbox, only the first tenant may run local actions, on any provisioner of the same user", async (t) => {
  const workDir = await mkdtemp(join(tmpdir(), "corral-prov-unsandboxed-"));
  const otherWorkDir = await mkdtemp(join(tmpdir(), "corral-prov-unsandboxed-"));
  const state = await mkdtemp(join(tmpdir(), "corral-prov-state-"));
  t.teardown(() => Promise.all([workDir, otherWorkDir, state].map((d) => rm(d, { recursive: true, force: true }))));
  const unsandboxed = () =>
    createLocalSandbox({ isolation: { mode: "unsandboxed", namespace: false }, unsandboxedOwnerFile: join(state, "corral", "unsandboxed-tenant") });
  const shell = createShellAutomator({ sandbox: unsandboxed() });
  const action = { name: "INSTALL" as const, service: "web", fields: { script: "echo ran" } };
  const first = await shell.runAction(pluginContext(shellTask("first", "x"), { workDir }), action);
  t.is(first.status, 0, first.stderr);
  const other = await shell.runAction(pluginContext(shellTask("other", "x"), { workDir }), action);
  t.is(other.status, 1);
  t.regex(other.stderr ?? "", /cannot be sandboxed.*only the tenant that ran the first one \(first/);
  t.is((await shell.bootstrap(pluginContext(shellTask("other", "x"), { workDir }))).status, 1);
  t.is((await shell.runAction(pluginContext(shellTask("first", "x"), { workDir }), action)).stdout, "ran\n");
  // A second provisioner of the same user, with a work directory of its own, admits no other tenant either.
  const second = createShellAutomator({ sandbox: unsandboxed() });
  const elsewhere = await second.runAction(pluginContext(shellTask("other", "x"), { workDir: otherWorkDir }), action);
  t.is(elsewhere.status, 1);
  t.regex(elsewhere.stderr ?? "", /only the tenant that ran the first one \(first/);
  t.is((await second.runAction(pluginContext(shellTask("first", "x"), { workDir: otherWorkDir }), action)).stdout, "ran\n");
});
