/**
 * The launcher's embedded redis-server is started again when it dies (deploy/src/redis-keeper.ts): same port, same
 * append-only file, and a client opened before the kill goes on working without being reopened.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import test from "ava";
import { openRedis, silentLogger } from "@corral/shared";
import { keepRedisRunning, type KeptServer } from "../src/redis-keeper.js";
import { startRedis } from "../src/servers.js";
import { eventually } from "../../test/helpers/eventually.js";

test("redis keeper - a SIGKILLed redis-server comes back on its port with its data; clients reconnect by themselves", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "corral-redis-keeper-"));
  let stopping = false;
  const notices: string[] = [];
  const options = { dir, persist: true, password: "keeper-test" };
  const first = await startRedis(options);
  const server: KeptServer = { name: "redis-server", handle: first };
  keepRedisRunning(server, { ...options, port: first.port }, (msg) => notices.push(msg), () => stopping);
  const client = openRedis({ url: first.url, log: silentLogger, name: "keeper-test" });
  t.teardown(async () => {
    stopping = true;
    await client.close().catch(() => {});
    await server.handle.stop();
    await rm(dir, { recursive: true, force: true });
  });

  await eventually(() => client.isReady, { what: "the client connected" });
  await client.set("kept", "yes");
  await sleep(1_100); // the append-only file is fsynced every second
  process.kill(first.pid, "SIGKILL");
  await first.exited;
  await t.throwsAsync(client.get("kept"), undefined, "commands fail at once while Redis is gone");

  const value = await eventually(async () => (client.isReady ? await client.get("kept") : false), {
    what: "the same client reads the key from the restarted server",
    timeoutMs: 10_000,
    intervalMs: 100,
  });
  t.is(value, "yes");
  // The client can reconnect as soon as the new server listens, a moment before the keeper holds its handle.
  await eventually(() => server.handle.pid !== first.pid, { what: "the keeper holding the new server", timeoutMs: 10_000 });
  t.is(server.handle.port, first.port);
  t.true(notices.some((n) => n.includes(`(pid ${first.pid}) died; starting it again on port ${first.port}`)), notices.join("\n"));
  t.true(notices.some((n) => n.startsWith("redis-server restarted")), notices.join("\n"));
});
