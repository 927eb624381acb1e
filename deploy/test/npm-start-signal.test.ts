/**
 * `npm start` stops the whole system when npm itself is told to stop (SIGTERM to the npm process, as a service
 * manager or a benchmark's clean-up sends it): npm passes the signal to its script, and the script `exec`s node, so
 * no shell stands between them that would die and leave the launcher, its services and its servers running.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import test from "ava";
import { ensureNatsServer, freePort, repoRoot } from "@corral/deploy";
import { buildCompiled } from "../src/build.js";

/** Whether any process of process group `group` is alive. */
function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

test("SIGTERM to npm stops the launcher, every service, nats-server and redis-server", async (t) => {
  t.timeout(240_000);
  await buildCompiled();
  const dataDir = await mkdtemp(join(tmpdir(), "corral-npm-start-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${dirname(await ensureNatsServer())}${delimiter}${process.env["PATH"] ?? ""}`,
    CORRAL_DATA_DIR: dataDir,
    CORRAL_SERVER_PORT: String(await freePort()),
    CORRAL_NATS_EMBEDDED_PORT: "0",
    CORRAL_REDIS_EMBEDDED_PORT: "0",
    CORRAL_SECURITY_AUTH_SERVER_BIND_PORT: String(await freePort()),
    NO_UPDATE_NOTIFIER: "1",
    npm_config_update_notifier: "false",
  };
  for (const name of ["CORRAL_NATS_URL", "CORRAL_REDIS_URL", "CORRAL_CONFIG", "NODE_OPTIONS", "CORRAL_RUNTIME"]) delete env[name];
  // A group of its own, so that whatever the start leaves behind can be found (and is stopped at the end).
  const npm = spawn("npm", ["start"], { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const group = npm.pid!;
  const lines: string[] = [];
  let ready = false;
  for (const stream of [npm.stdout!, npm.stderr!]) {
    createInterface({ input: stream }).on("line", (line) => {
      lines.push(line);
      if (line.includes("ready: the API is up")) ready = true;
    });
  }
  try {
    const deadline = Date.now() + 180_000;
    while (!ready && npm.exitCode === null && Date.now() < deadline) await sleep(100);
    t.true(ready, lines.join("\n"));

    npm.kill("SIGTERM");
    const stopDeadline = Date.now() + 60_000;
    while (groupAlive(group) && Date.now() < stopDeadline) await sleep(200);
    t.false(groupAlive(group), `processes of npm start still run 60 s after npm got SIGTERM:\n${lines.slice(-20).join("\n")}`);
    t.true(lines.some((line) => line.includes("[launcher] stopped")), lines.slice(-20).join("\n"));
  } finally {
    if (groupAlive(group)) process.kill(-group, "SIGKILL");
    await rm(dataDir, { recursive: true, force: true });
  }
});
