/**
 * Service calls over a real nats-server: replies, errors, no responder, timeouts, many calls in flight, requests and
 * replies larger than one NATS message.
 */
import { randomBytes } from "node:crypto";
import { CorralError, NotFoundError } from "@corral/contracts";
import { connectNats, call, serve, silentLogger } from "@corral/shared";
import { testWithNats } from "../../test/helpers/nats-test.js";
import { startNats } from "../../test/helpers/servers.js";

const test = testWithNats("rpc-test");

test("rpc - call answers the handler's value, and its CorralError with status, code and details", async (t) => {
  const { nc } = t.context;
  const served = serve({
    nc,
    queue: "rpc-test",
    log: silentLogger,
    handlers: {
      "rpc.test.echo": (request: { n: number }) => ({ doubled: request.n * 2 }),
      "rpc.test.missing": () => {
        throw new NotFoundError("widget", "w1");
      },
    },
  });
  t.teardown(() => served.stop());
  t.deepEqual(await call(nc, "rpc.test.echo", { n: 21 }), { doubled: 42 });
  const err = await t.throwsAsync(call(nc, "rpc.test.missing", {}), { instanceOf: CorralError });
  t.is(err?.status, 404);
  t.is(err?.code, "not_found");
  t.is(err?.message, "widget w1 not found");
});

test("rpc - 500 calls in flight at once each get their own answer", async (t) => {
  const { nc, nats } = t.context;
  const server = await connectNats({ url: nats.url, name: "rpc-test-server" });
  t.teardown(() => server.close());
  const served = serve({
    nc: server,
    queue: "rpc-test",
    log: silentLogger,
    // Answers out of order: the later calls first.
    handlers: { "rpc.test.slow": async (r: { i: number }) => new Promise((resolve) => setTimeout(() => resolve(r.i), 50 - (r.i % 50))) },
  });
  t.teardown(() => served.stop());
  await server.flush();
  const answers = await Promise.all(Array.from({ length: 500 }, (_, i) => call<number>(nc, "rpc.test.slow", { i })));
  t.deepEqual(answers, Array.from({ length: 500 }, (_, i) => i));
});

test("rpc - a subject nobody serves is a 503 at once", async (t) => {
  const started = Date.now();
  const err = await t.throwsAsync(call(t.context.nc, "rpc.test.nobody", {}, { timeoutMs: 5000 }), { instanceOf: CorralError });
  t.is(err?.status, 503);
  t.is(err?.message, "no service answers rpc.test.nobody");
  t.true(Date.now() - started < 2000, "not after the timeout");
});

test("rpc - a service that does not answer in time is a 504 after about timeoutMs", async (t) => {
  const { nc } = t.context;
  const sub = nc.subscribe("rpc.test.silent", { callback: () => {} }); // takes requests, never answers
  t.teardown(() => sub.unsubscribe());
  await nc.flush();
  const started = Date.now();
  const err = await t.throwsAsync(call(nc, "rpc.test.silent", {}, { timeoutMs: 300 }), { instanceOf: CorralError });
  const waitedMs = Date.now() - started;
  t.is(err?.status, 504);
  t.is(err?.code, "timeout");
  t.is(err?.message, "service did not answer rpc.test.silent in time");
  t.true(waitedMs >= 300 && waitedMs < 1000, `waited ${waitedMs} ms`);
});

test("rpc - calls on a closed connection fail, and so do calls in flight when it closes", async (t) => {
  const { nats } = t.context;
  const nc = await connectNats({ url: nats.url, name: "rpc-test-closing" });
  const sub = nc.subscribe("rpc.test.never", { callback: () => {} });
  await nc.flush();
  const inFlight = call(nc, "rpc.test.never", {}, { timeoutMs: 10_000 });
  await nc.close();
  await t.throwsAsync(inFlight);
  await t.throwsAsync(call(nc, "rpc.test.never", {}));
  sub.unsubscribe();
});

test("rpc - a request and a reply larger than one NATS message travel deflated; one that stays too large is a 413", async (t) => {
  const nats = await startNats({ maxPayloadBytes: 64 * 1024 });
  t.teardown(() => nats.stop());
  const nc = await connectNats({ url: nats.url, name: "rpc-test-large" });
  t.teardown(() => nc.close());
  const served = serve({
    nc,
    queue: "rpc-test",
    log: silentLogger,
    handlers: {
      "rpc.test.tasks": (r: { tasks: unknown[] }) => ({ count: r.tasks.length, tasks: r.tasks }),
      "rpc.test.noise": (r: { bytes: number }) => randomBytes(r.bytes),
    },
  });
  t.teardown(() => served.stop());
  await nc.flush();
  // About 140 KB of msgpack, like a large plan's tasks: more than the server's 64 KiB, far less once deflated.
  const tasks = Array.from({ length: 2_000 }, (_, i) => ({ taskName: "install", nodeId: `00000001-${1000 + i}`, service: "datanode" }));
  t.deepEqual(await call(nc, "rpc.test.tasks", { tasks }), { count: tasks.length, tasks });

  const err = await t.throwsAsync(call(nc, "rpc.test.noise", { bytes: 200_000 }), { instanceOf: CorralError });
  t.is(err?.status, 413);
  t.is(err?.code, "reply_too_large");
});
