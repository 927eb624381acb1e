import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import test from "ava";
import { createClient } from "redis";
import { rawRedisAnswer } from "../../test/helpers/raw-redis.js";
import { startNats, startRedis } from "../../test/helpers/servers.js";
import { NATS_SERVER_GOGC, natsServerEnv, SERVICE_NODE_OPTIONS, serviceNodeEnv } from "../src/servers.js";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test("servers - nats with JetStream answers a request, and stop() leaves no process", async (t) => {
  const nats = await startNats({ jetstream: true });
  try {
    const nc = await connect({ servers: nats.url });
    try {
      const subject = `echo.${randomUUID()}`;
      const sub = nc.subscribe(subject);
      void (async () => {
        for await (const m of sub) {
          m.respond(m.data);
        }
      })();
      const reply = await nc.request(subject, "ping", { timeout: 5_000 });
      t.is(reply.string(), "ping");
      t.is(nc.info?.max_payload, 8 * 1024 * 1024, "max_payload defaults to 8 MiB");
    } finally {
      await nc.close();
    }
    const varz = (await (await fetch(`${nats.monitorUrl}/varz`)).json()) as { jetstream?: { config?: { sync_always?: boolean } } };
    t.true(varz.jetstream?.config?.sync_always, "JetStream runs with sync_interval: always by default");
    const environment = (await readFile(`/proc/${nats.pid}/environ`, "utf8")).split("\0");
    t.true(environment.includes(`GOGC=${NATS_SERVER_GOGC}`), "nats-server collects garbage less often than Go's default");
  } finally {
    await Promise.all([nats.stop(), nats.stop()]);
  }
  t.false(isAlive(nats.pid), "nats-server is gone after stop()");
});

test("servers - an operator's GOGC for nats-server is kept", (t) => {
  t.is(natsServerEnv({ PATH: "/bin" })["GOGC"], NATS_SERVER_GOGC);
  t.is(natsServerEnv({ GOGC: "150" })["GOGC"], "150");
});

test("servers - redis answers SET and GET, and stop() leaves no process", async (t) => {
  const redis = await startRedis();
  try {
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const key = `test-${randomUUID()}`;
      await client.set(key, "value");
      t.is(await client.get(key), "value");
    } finally {
      await client.close();
    }
  } finally {
    await redis.stop();
  }
  await redis.stop();
  t.false(isAlive(redis.pid), "redis-server is gone after stop()");
});

test("servers - a persistent JetStream store keeps a KV value across a restart", async (t) => {
  const storeDir = await mkdtemp(join(tmpdir(), "corral-test-store-"));
  t.teardown(() => rm(storeDir, { recursive: true, force: true }));
  const bucket = `test_${randomUUID().replaceAll("-", "")}`;

  {
    await using nats = await startNats({ jetstream: true, storeDir });
    const nc = await connect({ servers: nats.url });
    const kv = await new Kvm(nc).create(bucket);
    await kv.put("greeting", "hello");
    await nc.close();
  }

  await using nats = await startNats({ jetstream: true, storeDir });
  const nc = await connect({ servers: nats.url });
  try {
    const kv = await new Kvm(nc).open(bucket);
    const entry = await kv.get("greeting");
    t.is(entry?.string(), "hello");
  } finally {
    await nc.close();
  }
});

test("servers - nats with users refuses a client without credentials or with a wrong password, and lets a user in", async (t) => {
  await using nats = await startNats({ users: [{ user: "alice", password: "s3cret" }] });
  const refused = await t.throwsAsync(connect({ servers: nats.url, reconnect: false }));
  t.regex(refused?.message ?? "", /authorization violation/i, "no credentials: refused");
  const wrong = await t.throwsAsync(connect({ servers: nats.url, user: "alice", pass: "guess", reconnect: false }));
  t.regex(wrong?.message ?? "", /authorization violation/i, "wrong password: refused");
  const nc = await connect({ servers: nats.url, user: "alice", pass: "s3cret" });
  await nc.flush();
  t.is(nc.info?.auth_required, true);
  await nc.close();
});

test("servers - redis with a password answers NOAUTH without it, serves with it, and no process listing shows it", async (t) => {
  const password = `pw-${randomUUID()}`;
  await using redis = await startRedis({ password });
  t.true(redis.url.includes(`:${password}@`), "the handle's URL carries the password");
  t.regex(await rawRedisAnswer(redis.port, "GET x"), /^-NOAUTH/);
  const client = createClient({ url: redis.url });
  await client.connect();
  try {
    await client.set("k", "v");
    t.is(await client.get("k"), "v");
  } finally {
    await client.close();
  }
  const cmdline = (await readFile(`/proc/${redis.pid}/cmdline`, "utf8")).replaceAll("\0", " ");
  t.false(cmdline.includes(password), `redis-server's command line is ${cmdline}`);
});

test("servers - Corral's node processes get a larger young generation, added to an operator's NODE_OPTIONS, not over theirs", async (t) => {
  t.is(serviceNodeEnv({ PATH: "/bin" })["NODE_OPTIONS"], SERVICE_NODE_OPTIONS);
  t.is(serviceNodeEnv({ NODE_OPTIONS: "--enable-source-maps" })["NODE_OPTIONS"], `--enable-source-maps ${SERVICE_NODE_OPTIONS}`);
  t.is(serviceNodeEnv({ NODE_OPTIONS: "--max-semi-space-size=8" })["NODE_OPTIONS"], "--max-semi-space-size=8");
  const dockerfile = await readFile(new URL("../docker/Dockerfile", import.meta.url), "utf8");
  t.true(dockerfile.includes(`ENV NODE_OPTIONS=${SERVICE_NODE_OPTIONS}`), "the image's processes run with them too");
});
