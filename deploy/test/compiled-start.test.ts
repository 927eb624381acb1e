/**
 * `npm start` runs compiled JavaScript (issue 26, "What a process costs"): the launcher in the start script's own
 * process, each service and the provisioner as `node --conditions=corral-compiled <workspace>/dist/index.js`, no
 * process through tsx; the provisioner loads its plugin modules compiled and a cluster on sim gets active.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import anyTest, { type TestFn } from "ava";
import { freePort } from "@corral/deploy";
import { createCluster, createClusterCatalog, waitForStatus } from "../../test/helpers/cluster-fixture.js";
import { startLauncher, type Launcher } from "../../test/helpers/launcher.js";
import { buildCompiled } from "../src/build.js";

const test = anyTest as TestFn<{ parent: string; running: { launcher?: Launcher } }>;

test.before(async (t) => {
  t.timeout(300_000);
  t.context.parent = await mkdtemp(join(tmpdir(), "corral-compiled-start-"));
  t.context.running = {};
  // What `npm start` would do first; done here so that the start below is timed without it.
  await buildCompiled();
});
test.after.always(async (t) => {
  await t.context.running?.launcher?.stop();
  if (t.context.parent) await rm(t.context.parent, { recursive: true, force: true });
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
    nodeArgs: ["--conditions=corral-compiled", "deploy/bin/start.mjs"],
    timeoutMs: 120_000,
  }));
  t.true(launcher.lines.some((l) => l.includes("running the compiled JavaScript (dist/)")), launcher.lines.join("\n"));
  const commands = descendantCommands(launcher.child.pid!);
  const nodeChildren = commands.filter((c) => /\/dist\/index\.js/.test(c));
  t.deepEqual(
    nodeChildren.map((c) => /(?:services\/(\w+)|(provisioner))\/dist\/index\.js/.exec(c)?.slice(1).find(Boolean)).sort(),
    ["auth", "clusters", "gateway", "metrics", "plugins", "provisioner", "solver", "tenancy"],
  );
  for (const command of nodeChildren) t.regex(command, /--conditions=corral-compiled --expose-gc --import=\.\/deploy\/dist\/preload-idle-gc\.js /);
  t.deepEqual(
    commands.filter((c) => /tsx|\.ts\b/.test(c)),
    [],
    "nothing runs through tsx",
  );
  const apiUrl = launcher.lines.find((l) => l.includes("ready: the API is up at"))?.replace(/.*ready: the API is up at /, "") ?? "";
  const catalog = await createClusterCatalog(apiUrl, { workers: 2, services: [{ name: "base", actions: { install: "true" } }] });
  const id = await createCluster(apiUrl, catalog, 2);
  await waitForStatus(apiUrl, catalog, id, "active", 60_000);
  t.is(await launcher.stop(), 0);
});
