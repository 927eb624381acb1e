/**
 * What local actions (sim nodes) leave on the provisioner host: a node's directory goes with the node's DELETE
 * (links planted by the tenant never followed), and an action's /tmp and /var/tmp are its tenant's own directory,
 * not the host's. Real processes in the real sandbox (tenant users in a mount namespace when run as root, CI), and
 * the user-namespace mode a provisioner not run as root uses.
 */
import { randomUUID } from "node:crypto";
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import test from "ava";
import type { TaskMessage } from "@corral/contracts";
import { createShellAutomator, createSimProvider, nodeDir, tenantDir } from "@corral/provisioner";
import { createLocalSandbox, type LocalSandbox, tenantTmpDir } from "@corral/provisioner/testing";
import { taskMessage, uniqueName } from "./helpers.js";
import { pluginContext } from "./helpers/plugin-context.js";

const simTask = (tenant: string, clusterId: string, nodeId: string, taskName: "DELETE" | "CREATE" = "DELETE") =>
  taskMessage({ tenant, clusterId, nodeId, taskName });

async function shellRun(sandbox: LocalSandbox, workDir: string, task: TaskMessage, script: string) {
  const out = await createShellAutomator({ sandbox }).runAction(pluginContext(task, { workDir }), { name: "INSTALL", service: "web", fields: { script } });
  if (out.status !== 0) throw new Error(`action failed: ${out.stderr}`);
  return out;
}

const exists = (path: string) => lstat(path).then(() => true, () => false);

async function scratch(prefix: string) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

test("sim DELETE removes the node's directory, and its cluster's once empty, never through the tenant's links", async (t) => {
  const work = await scratch("corral-prov-simdel-");
  const outside = await scratch("corral-prov-simdel-outside-");
  t.teardown(work.remove);
  t.teardown(outside.remove);
  await writeFile(join(outside.dir, "keep.txt"), "NOT THE TENANT'S");
  const sandbox = createLocalSandbox({ privatePaths: [] });
  const tenant = uniqueName("t");
  const clusterId = "00000042";
  const [first, second] = [randomUUID(), randomUUID()];
  for (const nodeId of [first, second]) {
    const task = simTask(tenant, clusterId, nodeId, "CREATE");
    // Files, a directory its owner cannot write, and links out of the directory: none may stop or misdirect the removal.
    await shellRun(sandbox, work.dir, task, `echo secret > work.txt && mkdir -p deep/locked && echo x > deep/locked/f && chmod 500 deep/locked && ln -s ${outside.dir} out && ln -s ${outside.dir}/keep.txt out-file`);
  }
  const sim = createSimProvider();
  const firstDir = nodeDir(work.dir, tenant, clusterId, first);
  t.true(await exists(join(firstDir, "work.txt")));

  const deleted = await sim.delete(pluginContext(simTask(tenant, clusterId, first), { workDir: work.dir }));
  t.is(deleted.status, 0, deleted.stderr);
  t.false(await exists(firstDir), "the node's directory is gone");
  t.true(await exists(nodeDir(work.dir, tenant, clusterId, second)), "the other node's stays");
  t.deepEqual(await readdir(outside.dir), ["keep.txt"], "nothing behind the links was touched");
  t.is(await readFile(join(outside.dir, "keep.txt"), "utf8"), "NOT THE TENANT'S");

  t.is((await sim.delete(pluginContext(simTask(tenant, clusterId, first), { workDir: work.dir }))).status, 0, "a repeated DELETE succeeds");
  t.is((await sim.delete(pluginContext(simTask(tenant, clusterId, second), { workDir: work.dir }))).status, 0);
  t.false(await exists(dirname(firstDir)), "the emptied cluster directory is gone");
  t.true(await exists(join(tenantDir(work.dir, tenant), "nodes")));
  t.is((await sim.delete(pluginContext(simTask(uniqueName("never-ran"), clusterId, first), { workDir: work.dir }))).status, 0, "a node that never ran an action");
});

test("sim DELETE removes nothing below a link planted in place of the cluster's directory", async (t) => {
  const work = await scratch("corral-prov-simdel-link-");
  const outside = await scratch("corral-prov-simdel-victim-");
  t.teardown(work.remove);
  t.teardown(outside.remove);
  const tenant = uniqueName("t");
  const nodeId = randomUUID();
  // What a tenant's action could do in a user namespace, where it owns its directory: nodes/<cluster> -> elsewhere.
  await mkdir(join(outside.dir, nodeId));
  await writeFile(join(outside.dir, nodeId, "victim.txt"), "VICTIM");
  await mkdir(join(tenantDir(work.dir, tenant), "nodes"), { recursive: true });
  await symlink(outside.dir, dirname(nodeDir(work.dir, tenant, "00000007", nodeId)));
  const out = await createSimProvider().delete(pluginContext(simTask(tenant, "00000007", nodeId), { workDir: work.dir }));
  t.is(out.status, 0, out.stderr);
  t.is(await readFile(join(outside.dir, nodeId, "victim.txt"), "utf8"), "VICTIM");
});

const isolations: Array<[string, () => LocalSandbox]> = [
  ["detected", () => createLocalSandbox({ privatePaths: [] })],
  ["user-namespace", () => createLocalSandbox({ isolation: { mode: "user-namespace", namespace: true }, privatePaths: [] })],
];

for (const [name, make] of isolations) {
  test(`another tenant's action reads none of an action's temporary files; TMPDIR is the tenant's own (${name})`, async (t) => {
    const work = await scratch("corral-prov-tmp-");
    t.teardown(work.remove);
    const sandbox = make();
    const sameUid = (await sandbox.isolation()).mode !== "tenant-user";
    const [a, b] = [uniqueName("tmp-a"), uniqueName("tmp-b")];
    const token = randomUUID().slice(0, 8);
    const files = [`/tmp/a-tmp-${token}`, `/var/tmp/a-var-${token}`];
    t.teardown(() => Promise.all(files.map((f) => rm(f, { force: true }))));
    const wrote = await shellRun(
      sandbox,
      work.dir,
      taskMessage({ tenant: a }),
      `echo A-TMP-${token} > ${files[0]} && echo A-VAR-${token} > ${files[1]} && f=$(mktemp) && echo A-MKTEMP-${token} > "$f" && echo "$f"`,
    );
    const made = wrote.stdout!.trim();
    t.true(made.startsWith(`${tenantTmpDir(work.dir, a)}/`), `mktemp (TMPDIR) made ${made}`);
    // (/tmp too, but not here: with the work directory below /tmp, a user namespace gets a fresh /tmp per action.)
    const again = await shellRun(sandbox, work.dir, taskMessage({ tenant: a }), `cat ${files[1]} "${made}"`);
    t.is(again.stdout, `A-VAR-${token}\nA-MKTEMP-${token}\n`, "A's temporary files last across its actions");

    const bOut = await shellRun(sandbox, work.dir, taskMessage({ tenant: b }), `ls -a /tmp /var/tmp "$TMPDIR"; cat ${files.join(" ")} "${made}" 2>/dev/null; true`);
    t.false((bOut.stdout ?? "").includes(`A-`), `B read A's temporary files:\n${bOut.stdout}`);
    if (sameUid) {
      // Every tenant is the provisioner's uid here: only a /tmp of its own keeps B out.
      t.false((bOut.stdout ?? "").includes(token), `B listed A's temporary files:\n${bOut.stdout}`);
      for (const file of files) t.false(await exists(file), `${file} is not in the host's temporary directory`);
      t.true((await readdir(tenantTmpDir(work.dir, a))).includes(`a-var-${token}`), "A's /var/tmp is A's temporary directory");
    } else {
      // With tenant users the host's /tmp stays: A's file there is its user's alone (removed with the tenant).
      const s = await stat(files[0]!);
      t.deepEqual([s.uid, s.mode & 0o777], [(await stat(tenantDir(work.dir, a))).gid, 0o600]);
    }
  });
}

test("a tenant's temporary directory is root's and sticky with tenant users (a tenant cannot swap it)", async (t) => {
  if (process.getuid?.() !== 0) return t.pass("not root: no tenant users");
  const work = await scratch("corral-prov-tmpmode-");
  t.teardown(work.remove);
  const sandbox = createLocalSandbox({ privatePaths: [] });
  const tenant = uniqueName("t");
  await shellRun(sandbox, work.dir, taskMessage({ tenant }), "true");
  const s = await stat(tenantTmpDir(work.dir, tenant));
  t.deepEqual([s.uid, s.mode & 0o7777], [0, 0o1777]);
});
