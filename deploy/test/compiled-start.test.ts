/**
 * `npm start` runs compiled JavaScript (issue 26, "What a process costs"): the launcher in the start script's own
 * process, each service and the provisioner as `node --conditions=corral-compiled <workspace>/dist/index.js` (auth,
 * metrics, plugins and webhooks together as deploy/dist/shared-process-main.js), no process through tsx; the provisioner loads its plugin modules compiled (the default ec2 and lxd ones and a
 * JavaScript module of a third party that imports the SDK) and a cluster on sim gets active.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import anyTest, { type TestFn } from "ava";
import { freePort, repoRoot } from "@corral/deploy";
import { api, SUPERADMIN } from "../../test/helpers/api.js";
import { createCluster, createClusterCatalog, waitForStatus } from "../../test/helpers/cluster-fixture.js";
import { startLauncher, type Launcher } from "../../test/helpers/launcher.js";
import { buildCompiled } from "../src/build.js";

const test = anyTest as TestFn<{ parent: string; pluginDir: string; running: { launcher?: Launcher } }>;

/**
 * A third party's plugin module: plain JavaScript that imports the provisioner's SDK, as a package installed
 * beside Corral would. It lies inside the checkout (in the ignored .corral/) so `@corral/provisioner/sdk` resolves.
 */
const THIRD_PARTY_PLUGIN = `
import { runsActionsLocally } from "@corral/provisioner/sdk";
export default [
  async () => ({
    kind: "providertypes",
    spec: { name: "third-party", description: "a provider of a plugin module (sdk: " + typeof runsActionsLocally + ")" },
    async create() { return { status: 0, result: { providerid: "third-party" } }; },
    async confirm() { return { status: 0 }; },
    async delete() { return { status: 0 }; },
  }),
];
`;

test.before(async (t) => {
  t.timeout(300_000);
  t.context.parent = await mkdtemp(join(tmpdir(), "corral-compiled-start-"));
  t.context.running = {};
  t.context.pluginDir = await mkdtemp(join(repoRoot, ".corral", "compiled-start-"));
  await writeFile(join(t.context.pluginDir, "third-party.mjs"), THIRD_PARTY_PLUGIN);
  // What `npm start` would do first; done here so that the start below is timed without it.
  await buildCompiled();
});
test.after.always(async (t) => {
  await t.context.running?.launcher?.stop();
  if (t.context.parent) await rm(t.context.parent, { recursive: true, force: true });
  if (t.context.pluginDir) await rm(t.context.pluginDir, { recursive: true, force: true });
});

/** The command line of every live descendant of `root`, from /proc. */
function descendantCommands(root: number): string[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc").filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // exited meanwhile
    }
  }
  const below = (pid: number): number[] => [...parents].filter(([, ppid]) => ppid === pid).flatMap(([child]) => [child, ...below(child)]);
  return below(root).map((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    } catch {
      return "";
    }
  });
}

test.serial("npm start runs the launcher, every service and the provisioner as compiled JavaScript; a cluster gets active", async (t) => {
  t.timeout(300_000);
  const launcher = (t.context.running.launcher = await startLauncher({
    dataDir: join(t.context.parent, "data"),
    apiPort: await freePort(),
    nodeArgs: ["--conditions=corral-compiled", "--expose-gc", "deploy/bin/start.mjs"],
    env: { CORRAL_PROVISIONER_PLUGINS: `@corral/provider-ec2,@corral/provider-lxd,${join(t.context.pluginDir, "third-party.mjs")}` },
    timeoutMs: 120_000,
  }));
  t.true(launcher.lines.some((l) => l.includes("running the compiled JavaScript (dist/)")), launcher.lines.join("\n"));
  const commands = descendantCommands(launcher.child.pid!);
  const nodeChildren = commands.filter((c) => /\/dist\/(?:index|shared-process-main)\.js/.test(c));
  t.deepEqual(
    nodeChildren.map((c) => /(?:services\/(\w+)|(provisioner))\/dist\/index\.js|deploy\/dist\/(shared-process-main)\.js/.exec(c)?.slice(1).find(Boolean)).sort(),
    ["clusters", "gateway", "provisioner", "shared-process-main", "solver", "tenancy"],
  );
  // The shared process loads the compiled definitions of the four it runs: each says it started.
  t.true(launcher.lines.includes("[launcher] auth, metrics, plugins and webhooks share one process (launcher.sharedProcess)"));
  for (const service of ["auth", "metrics", "plugins", "webhooks"]) {
    t.true(launcher.lines.some((l) => l.includes(`"msg":"${service} service started"`)), `${service} started`);
  }
  for (const command of nodeChildren) t.regex(command, /--conditions=corral-compiled --expose-gc --import=\.\/deploy\/dist\/preload-idle-gc\.js /);
  t.deepEqual(
    commands.filter((c) => /tsx|\.ts\b/.test(c)),
    [],
    "nothing runs through tsx",
  );
  const apiUrl = launcher.lines.find((l) => l.includes("ready: the API is up at"))?.replace(/.*ready: the API is up at /, "") ?? "";
  const providerTypes = await api(apiUrl, "GET", "/plugins/providertypes", SUPERADMIN);
  for (const name of ["ec2", "lxd", "third-party"]) t.true(providerTypes.text.includes(`"${name}"`), `${name}: ${providerTypes.text.slice(0, 300)}`);
  t.regex(providerTypes.text, /sdk: function/);
  const catalog = await createClusterCatalog(apiUrl, { workers: 2, services: [{ name: "base", actions: { install: "true" } }] });
  const id = await createCluster(apiUrl, catalog, 2);
  await waitForStatus(apiUrl, catalog, id, "active", 60_000);
  t.is(await launcher.stop(), 0);
});
