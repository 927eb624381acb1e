/**
 * The example plugin module of provisioner/README.md ("Writing a plugin") works as written: taken from the README,
 * put in a directory outside the repository with `@corral/provisioner` linked into its `node_modules` (as a third
 * party's checkout would have it), loaded by a provisioner process through `provisioner.plugins` (a path relative
 * to that process's working directory), and a cluster runs on it through the REST API from CREATE to DELETE.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { access, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import anyTest, { type TestFn } from "ava";
import { repoRoot } from "@corral/deploy";
import { buckets, kvKey, type ProvisionerRecord } from "@corral/contracts";
import { openBucket, readValue } from "@corral/shared";
import { nodeDir } from "@corral/provisioner";
import { api } from "../../test/helpers/api.js";
import { createCluster, createClusterCatalog, waitForStatus } from "../../test/helpers/cluster-fixture.js";
import { waitForAssignment } from "../../test/helpers/clusters.js";
import { startSystem, type TestSystem } from "../../test/helpers/system.js";
import { eventually, uniqueName } from "./helpers.js";

const test = anyTest as TestFn<{ sys: TestSystem; dir: string; child: ChildProcess; output: () => string; id: string }>;

const MODULE_PATH = "my-plugins/workbench.ts";
const ADDRESS = "127.0.0.7";

/** The README's code block that starts with `// my-plugins/workbench.ts`. */
async function readmeExample(): Promise<string> {
  const readme = await readFile(join(repoRoot, "provisioner", "README.md"), "utf8");
  const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  const example = blocks.filter((b) => b.startsWith(`// ${MODULE_PATH}`));
  if (example.length !== 1) throw new Error(`provisioner/README.md has ${example.length} code blocks starting with "// ${MODULE_PATH}", expected 1`);
  return example[0]!;
}

test.before(async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "corral-readme-plugin-"));
  t.context.dir = dir;
  if (!relative(repoRoot, dir).startsWith("..")) throw new Error(`${dir} is inside the repository`);
  await mkdir(join(dir, "my-plugins"));
  await writeFile(join(dir, MODULE_PATH), await readmeExample());
  await mkdir(join(dir, "node_modules", "@corral"), { recursive: true });
  await symlink(join(repoRoot, "provisioner"), join(dir, "node_modules", "@corral", "provisioner"));

  t.context.sys = await startSystem({ clusters: 1 });
  t.context.id = uniqueName("readme-prov");
  let output = "";
  t.context.output = () => output;
  // As a third party runs it from its own directory: the provisioner through its node_modules, tsx by its path.
  const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), "node_modules/@corral/provisioner/src/index.ts"], {
    cwd: dir,
    env: {
      ...process.env,
      CORRAL_NATS_URL: t.context.sys.provisionerNatsUrl,
      CORRAL_PROVISIONER_ID: t.context.id,
      CORRAL_PROVISIONER_WORKDIR: join(dir, "work"),
      CORRAL_PROVISIONER_PLUGINS: `./${MODULE_PATH}`,
      CORRAL_WORKBENCH_ADDRESS: ADDRESS,
      CORRAL_METRICS_ENABLED: "false",
      CORRAL_LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.context.child = child;
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
});

test.after.always(async (t) => {
  const { child } = t.context;
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

const exists = (path: string) => access(path).then(() => true, () => false);

test("readme plugin - the example module loads through provisioner.plugins and runs a cluster end to end", async (t) => {
  const { sys, dir, id } = t.context;
  const registered = await eventually(
    async () => {
      if (t.context.child.exitCode !== null) throw new Error(`the provisioner exited ${t.context.child.exitCode}:\n${t.context.output()}`);
      const record = (await readValue<ProvisionerRecord>(await openBucket(sys.nc, buckets.provisioners), kvKey(id)))?.value;
      return record?.plugins.providertypes.includes("workbench") ? record : false;
    },
    { what: "the provisioner registered provider type workbench", timeoutMs: 30_000 },
  );
  t.true(registered.plugins.automatortypes.includes("shell"), "beside the bundled plugins");
  t.regex(t.context.output(), /"pluginModule":"\.\/my-plugins\/workbench\.ts","msg":"plugin module loaded","plugins":\["providertypes\/workbench"\]/);

  const catalog = await createClusterCatalog(sys.baseUrl, {
    workers: 2,
    providerType: "workbench",
    sim: { label: "bench-7" },
    services: [{ name: "hello", actions: { install: 'echo "installed on $CORRAL_NODE_ID at $CORRAL_IP" > hello.txt', start: "cat hello.txt" } }],
  });
  await waitForAssignment(sys.nc, catalog.tenant);
  const clusterId = await createCluster(sys.baseUrl, catalog, 2);
  await waitForStatus(sys.baseUrl, catalog, clusterId, "active", 60_000);

  const cluster = await api(sys.baseUrl, "GET", `/clusters/${clusterId}`, catalog.admin);
  t.is(cluster.status, 200, cluster.text);
  const nodes = (cluster.body as { nodes: Array<{ id: string; properties: { ipaddresses: Record<string, string> } }> }).nodes;
  t.is(nodes.length, 2);
  const dirs: string[] = [];
  for (const node of nodes) {
    t.deepEqual(node.properties.ipaddresses, { access_v4: ADDRESS, bind_v4: ADDRESS }, "CONFIRM's address, from the plugin's setting");
    // Declared local: the service's actions ran on the provisioner host, in the node's directory.
    const nodeDirectory = nodeDir(join(dir, "work"), catalog.tenant, clusterId, node.id);
    t.is(await readFile(join(nodeDirectory, "hello.txt"), "utf8"), `installed on ${node.id} at ${ADDRESS}\n`);
    dirs.push(nodeDirectory);
  }

  t.is((await api(sys.baseUrl, "DELETE", `/clusters/${clusterId}`, catalog.admin)).status, 200);
  await waitForStatus(sys.baseUrl, catalog, clusterId, "terminated", 60_000);
  for (const nodeDirectory of dirs) t.false(await exists(nodeDirectory), `DELETE removed ${nodeDirectory}`);
});
