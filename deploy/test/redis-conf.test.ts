import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import test from "ava";
import { createClient } from "redis";
import { ensureRedisServer, freePort, repoRoot } from "@corral/deploy";
import { redisPing, waitUntilReady } from "../src/readiness.js";
import { spawnServer, type ServerProcess } from "../src/server-process.js";
import { rawRedisAnswer } from "../../test/helpers/raw-redis.js";

const PASSWORD = "conf-test-secret";

/**
 * redis-server on deploy/redis/redis.conf as committed, but for the places a machine would have: the data dir and
 * the included password file in a temporary directory, and a loopback port.
 */
async function startFromDeployConf(dir: string, port: number): Promise<ServerProcess> {
  const conf = (await readFile(join(repoRoot, "deploy", "redis", "redis.conf"), "utf8"))
    .replace(/^dir .*$/m, `dir ${dir}`)
    .replace(/^include \/etc\/corral\/redis-password\.conf$/m, `include ${join(dir, "redis-password.conf")}`);
  await writeFile(join(dir, "redis-password.conf"), `requirepass "${PASSWORD}"\n`, { mode: 0o600 });
  await writeFile(join(dir, "redis.conf"), conf);
  const server = spawnServer(await ensureRedisServer(), [join(dir, "redis.conf"), "--bind", "127.0.0.1", "--port", String(port)]);
  await waitUntilReady(server, "redis-server", async () => ((await redisPing(port, { password: PASSWORD })) ? true : undefined), 30_000);
  return server;
}

test("redis.conf - a password is required, and a write survives SIGKILL through the append-only file", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "corral-redis-conf-"));
  const port = await freePort();
  let server = await startFromDeployConf(dir, port);
  try {
    t.regex(await rawRedisAnswer(port, "GET anything"), /^-NOAUTH/);
    const client = createClient({ url: `redis://:${PASSWORD}@127.0.0.1:${port}` });
    await client.connect();
    try {
      const settings = await client.configGet("append*");
      t.like(settings, { appendonly: "yes", appendfsync: "everysec" });
      await client.set("corral:conf-test", "kept");
    } finally {
      await client.quit();
    }
    await sleep(1_500); // appendfsync everysec: on disk within about a second
    process.kill(server.pid, "SIGKILL");
    await server.exited;
    server = await startFromDeployConf(dir, port);
    const again = createClient({ url: `redis://:${PASSWORD}@127.0.0.1:${port}` });
    await again.connect();
    try {
      t.is(await again.get("corral:conf-test"), "kept");
    } finally {
      await again.quit();
    }
  } finally {
    await server.terminate(5_000);
    await rm(dir, { recursive: true, force: true });
  }
});
