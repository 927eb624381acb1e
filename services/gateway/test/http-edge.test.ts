/**
 * The HTTP edge over raw sockets (issue 26, "The HTTP edge"): a body over the limit is answered 413 and the client
 * reads it before the connection closes (no reset), a body of exactly the limit is served, a request pipelined
 * behind one that waits for its service is answered after it, and until the tenants are loaded every request gets
 * 503 with Retry-After instead of a wrong 401. A gateway of the test's own with small limits beside a system.
 */
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import anyTest, { type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { endpoints } from "@corral/contracts";
import { prepareBus, startNats } from "@corral/deploy";
import { connectNats, serve, silentLogger } from "@corral/shared";
import { startGateway, type Gateway } from "@corral/gateway";
import { startTenancyService } from "@corral/tenancy";
import { api, SUPERADMIN } from "../../../test/helpers/api.js";
import { upload } from "../../../test/helpers/plugin-rest.js";
import { eventually } from "../../../test/helpers/eventually.js";
import { startSystem, type TestSystem } from "../../../test/helpers/system.js";

const MAX_BODY = 64 * 1024;
const MAX_UPLOAD = 256 * 1024;

interface Context {
  sys: TestSystem;
  nc: NatsConnection;
  gateway: Gateway;
  port: number;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  // A provisioner registers the shell automator, whose scripts are uploads; no clusters service, so the test
  // answers clusters requests itself, as slowly as it likes.
  t.context.sys = await startSystem({ provisioners: 1 });
  t.context.nc = await connectNats({ url: t.context.sys.nats.url, name: "http-edge-gateway" });
  t.context.gateway = await startGateway({
    nc: t.context.nc,
    log: silentLogger,
    host: "127.0.0.1",
    port: 0,
    maxRequestBytes: MAX_BODY,
    maxUploadBytes: MAX_UPLOAD,
    requestTimeoutMs: 5_000,
  });
  t.context.port = t.context.gateway.port;
});
test.after.always(async (t) => {
  await t.context.gateway?.stop();
  await t.context.nc?.close();
  await t.context.sys?.stop();
});

interface Conversation {
  /** Everything the server sent. */
  answer: string;
  /** The server closed the connection (else the client gave up after `waitMs`). */
  closedByServer: boolean;
  /** A socket error the client saw (ECONNRESET: the server's close destroyed what it had not read). */
  error?: string;
  /** Milliseconds from the first write to the first byte of the answer. */
  firstByteMs?: number;
  /** Milliseconds from the first write to the close. */
  closedMs: number;
}

/** Writes each part (after its delay from the previous one) on one connection, and reads until close or `waitMs`. */
function converse(port: number, parts: Array<{ bytes: string | Buffer; afterMs?: number }>, waitMs = 3_000): Promise<Conversation> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let startedAt = 0;
    let firstByteMs: number | undefined;
    let error: string | undefined;
    let closedByServer = true;
    const timer = setTimeout(() => {
      closedByServer = false;
      socket.destroy();
    }, waitMs);
    socket.on("connect", async () => {
      startedAt = Date.now();
      for (const part of parts) {
        if (part.afterMs) await sleep(part.afterMs);
        if (socket.destroyed) return;
        socket.write(part.bytes);
      }
    });
    socket.on("data", (chunk) => {
      firstByteMs ??= Date.now() - startedAt;
      chunks.push(chunk);
    });
    socket.on("error", (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on("close", () => {
      clearTimeout(timer);
      const answer = Buffer.concat(chunks).toString("latin1");
      resolve({
        answer,
        closedByServer: closedByServer && error === undefined,
        ...(error ? { error } : {}),
        ...(firstByteMs !== undefined ? { firstByteMs } : {}),
        closedMs: Date.now() - startedAt,
      });
    });
  });
}

const IDENTITY = "Service-UserID: admin\r\nService-TenantID: superadmin\r\n";
const head = (method: string, path: string, lines: string) => `${method} ${path} HTTP/1.1\r\nHost: x\r\n${IDENTITY}${lines}\r\n`;
const statusLines = (answer: string) => answer.match(/HTTP\/1\.1 \d{3}/g) ?? [];
const tooLarge = (limit: number) =>
  new RegExp(
    `^HTTP/1\\.1 413 Payload Too Large\\r\\n[\\s\\S]*\\r\\nConnection: close\\r\\n[\\s\\S]*\\r\\n\\r\\n` +
      `\\{"status":413,"error":"payload_too_large","message":"request body is larger than ${limit} bytes"\\}$`,
    "i",
  );

/** A JSON body of exactly `size` bytes that creates tenant `name`. */
function tenantBodyOfSize(name: string, size: number): string {
  const body = JSON.stringify({ tenant: { name, workers: 0 } });
  return body.slice(0, -1) + " ".repeat(size - body.length) + "}";
}

test("a JSON body over the limit, written whole at once, is answered 413 and the connection closed without a reset", async (t) => {
  for (const excess of [1, 1024 * 1024]) {
    const body = "x".repeat(MAX_BODY + excess);
    const request = head("POST", "/v2/tenants", `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`) + body;
    const result = await converse(t.context.port, [{ bytes: request }]);
    t.is(result.error, undefined, `excess ${excess}: the client read its answer, no reset`);
    t.true(result.closedByServer, `excess ${excess}`);
    t.regex(result.answer, tooLarge(MAX_BODY), `excess ${excess}`);
  }
});

test("a chunked body that runs over the limit is answered 413 and the connection closed without a reset", async (t) => {
  const chunk = "y".repeat(16 * 1024);
  const chunks = Array.from({ length: (MAX_BODY + 512 * 1024) / chunk.length }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join("");
  const request = head("POST", "/v2/tenants", "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n") + chunks + "0\r\n\r\n";
  const result = await converse(t.context.port, [{ bytes: request }]);
  t.is(result.error, undefined);
  t.true(result.closedByServer);
  t.regex(result.answer, tooLarge(MAX_BODY));
});

test("a declared body over the limit that the client holds back (Expect: 100-continue) is refused within a second", async (t) => {
  const request = head("POST", "/v2/tenants", `Content-Type: application/json\r\nContent-Length: ${MAX_BODY * 4}\r\nExpect: 100-continue\r\n`);
  const result = await converse(t.context.port, [{ bytes: request }]);
  t.true(result.closedByServer);
  // uWS answers 100 Continue by itself; a client that then holds its body back still gets the 413 and the close.
  t.true(result.answer.startsWith("HTTP/1.1 100 Continue\r\n\r\n"), result.answer);
  t.regex(result.answer.slice("HTTP/1.1 100 Continue\r\n\r\n".length), tooLarge(MAX_BODY));
  t.true(result.closedMs < 1_500, `closed after ${result.closedMs} ms`);
});

test("a declared body over the limit of which the client sends a little and stops is refused and the connection closed", async (t) => {
  const request = head("POST", "/v2/tenants", `Content-Type: application/json\r\nContent-Length: ${MAX_BODY * 4}\r\n`) + "{";
  const result = await converse(t.context.port, [{ bytes: request }]);
  t.true(result.closedByServer);
  t.regex(result.answer, tooLarge(MAX_BODY));
});

test("a JSON body of exactly the limit is served; one byte more is refused", async (t) => {
  const { port } = t.context;
  const baseUrl = `http://127.0.0.1:${port}/v2`;
  const exact = tenantBodyOfSize("edge-exact", MAX_BODY);
  t.is(Buffer.byteLength(exact), MAX_BODY);
  const served = await converse(port, [{ bytes: head("POST", "/v2/tenants", `Content-Type: application/json\r\nContent-Length: ${MAX_BODY}\r\nConnection: close\r\n`) + exact }]);
  t.deepEqual(statusLines(served.answer), ["HTTP/1.1 200"], served.answer);
  t.is((await api(baseUrl, "GET", "/tenants/edge-exact", SUPERADMIN)).status, 200);
  const over = tenantBodyOfSize("edge-over", MAX_BODY + 1);
  const refused = await converse(port, [{ bytes: head("POST", "/v2/tenants", `Content-Type: application/json\r\nContent-Length: ${MAX_BODY + 1}\r\n`) + over }]);
  t.regex(refused.answer, tooLarge(MAX_BODY));
  t.is((await api(baseUrl, "GET", "/tenants/edge-over", SUPERADMIN)).status, 404);
});

test("an upload of exactly the limit is accepted; one byte more is refused, declared or chunked, and the client reads why", async (t) => {
  const baseUrl = `http://127.0.0.1:${t.context.port}/v2`;
  const path = (name: string) => `/plugins/automatortypes/shell/scripts/${name}`;
  const exact = await upload(baseUrl, SUPERADMIN, path("exact.sh"), Buffer.alloc(MAX_UPLOAD, "#"));
  t.is(exact.status, 200, exact.text);
  const declared = await upload(baseUrl, SUPERADMIN, path("declared.sh"), Buffer.alloc(MAX_UPLOAD + 1, "#"));
  t.is(declared.status, 413, declared.text);
  t.like(declared.body, { status: 413, error: "payload_too_large", message: `request body is larger than ${MAX_UPLOAD} bytes` });
  const chunk = "#".repeat(32 * 1024);
  const chunks = Array.from({ length: MAX_UPLOAD / chunk.length }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join("") + "1\r\n#\r\n0\r\n\r\n";
  const chunked = await converse(t.context.port, [{ bytes: head("POST", `/v2${path("chunked.sh")}`, "Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n") + chunks }]);
  t.is(chunked.error, undefined);
  t.true(chunked.closedByServer);
  t.regex(chunked.answer, tooLarge(MAX_UPLOAD));
});

/** Answers `endpoint`'s subject in place of its service, after `delayMs`; counts the requests. Subscribed once it resolves. */
async function slowService(nc: NatsConnection, endpoint: "clusters.create" | "clusters.list", delayMs: number, reply: unknown) {
  const subject = (endpoints[endpoint] as { subject?: string }).subject!;
  let requests = 0;
  const served = serve({
    nc,
    queue: `http-edge-${endpoint}`,
    log: silentLogger,
    handlers: {
      [subject]: async () => {
        requests++;
        await sleep(delayMs);
        return reply;
      },
    },
  });
  await nc.flush();
  return { requests: () => requests, stop: () => served.stop() };
}

test.serial("a request written while a change waits for its service is answered after it, in order, and the change is carried out", async (t) => {
  const service = await slowService(t.context.sys.nc, "clusters.create", 600, { id: "00000042" });
  try {
    const body = JSON.stringify({ name: "piped", clusterTemplate: "t1", numMachines: 1 });
    const post = head("POST", "/v2/clusters", `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`) + body;
    const result = await converse(t.context.port, [{ bytes: post }, { bytes: "GET /v2/status HTTP/1.1\r\nHost: x\r\n\r\n", afterMs: 200 }], 3_000);
    t.deepEqual(statusLines(result.answer), ["HTTP/1.1 200", "HTTP/1.1 200"], result.answer);
    t.regex(result.answer, /\{"id":"00000042"\}HTTP\/1\.1 200 OK\r\n[\s\S]*\{"status":"OK"\}$/, "the change's answer first");
    t.is(service.requests(), 1);
  } finally {
    await service.stop();
  }
});

test.serial("a request written while a read waits for its service is answered after it, in order", async (t) => {
  const service = await slowService(t.context.sys.nc, "clusters.list", 600, []);
  try {
    const result = await converse(
      t.context.port,
      [{ bytes: head("GET", "/v2/clusters", "") }, { bytes: "GET /v2/status HTTP/1.1\r\nHost: x\r\n\r\n", afterMs: 200 }],
      3_000,
    );
    t.deepEqual(statusLines(result.answer), ["HTTP/1.1 200", "HTTP/1.1 200"], result.answer);
    t.regex(result.answer, /\r\n\r\n\[\]HTTP\/1\.1 200 OK\r\n[\s\S]*\{"status":"OK"\}$/);
  } finally {
    await service.stop();
  }
});

test.serial("until tenancy has created the superadmin tenant every request but the API description is 503 with Retry-After", async (t) => {
  const nats = await startNats({ jetstream: true, syncAlways: false });
  const nc = await connectNats({ url: nats.url, name: "http-edge-fresh" });
  let gateway: Gateway | undefined;
  let tenancy: Awaited<ReturnType<typeof startTenancyService>> | undefined;
  try {
    await prepareBus(nc);
    gateway = await startGateway({ nc, log: silentLogger, host: "127.0.0.1", port: 0 });
    const baseUrl = `http://127.0.0.1:${gateway.port}`;
    for (const path of ["/status", "/v2/status", "/v2/tenants"]) {
      const res = await fetch(`${baseUrl}${path}`, { headers: { "Service-UserID": "admin", "Service-TenantID": "superadmin" } });
      t.is(res.status, 503, path);
      t.is(res.headers.get("retry-after"), "1", path);
      t.like(await res.json(), { status: 503, error: "service_unavailable" }, path);
    }
    t.is((await fetch(`${baseUrl}/v2/openapi.json`)).status, 200, "the API description needs no tenant");
    tenancy = await startTenancyService({ nc, log: silentLogger });
    await eventually(async () => (await fetch(`${baseUrl}/status`)).status === 200, { what: "the gateway to serve", timeoutMs: 10_000 });
    t.is((await api(`${baseUrl}/v2`, "GET", "/tenants", SUPERADMIN)).status, 200);
  } finally {
    await gateway?.stop();
    await tenancy?.stop();
    await nc.close();
    await nats.stop();
  }
});

test("a request that asks to close the connection gets an answer saying Connection: close, then the close", async (t) => {
  for (const request of [
    "GET /v2/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    head("GET", "/v2/tenants/superadmin", "Connection: Close\r\n"),
    head("POST", "/v2/tenants", "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n") + "{}",
  ]) {
    const result = await converse(t.context.port, [{ bytes: request }]);
    const what = request.split("\r\n")[0];
    t.true(result.closedByServer, what);
    t.is(statusLines(result.answer).length, 1, what);
    t.regex(result.answer.split("\r\n\r\n")[0] ?? "", /\r\nConnection: close(\r\n|$)/i, what);
  }
});
