/**
 * Live events with security on: the event streams take REST's token rules. No token, or another user's token, is
 * a 401 before anything streams; a stream whose token is revoked is closed at its next heartbeat, saying why.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectNats, silentLogger } from "@corral/shared";
import { startGateway } from "@corral/gateway";
import { openGatewaySecurity } from "@corral/gateway/testing";
import { api } from "../helpers/api.js";
import { openEventSocket, openSse, opened } from "../helpers/event-clients.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { bearer, revoke, tokenFor } from "../helpers/tokens.js";

const test = anyTest as TestFn<{ sys: TestSystem; dir: string }>;

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-e2e-events-auth-"));
  const realmfile = join(t.context.dir, "realm.properties");
  await writeFile(realmfile, ["root: rootpw,superadmin", "ops: opspw,admin:acme", "alice: alicepw"].join("\n"));
  t.context.sys = await startSystem({ clusters: 1, security: { config: { "security.authentication.basic.realmfile": realmfile } } });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

/** Creates tenant `name` (no workers) as the realm's superadmin, through the API with security on. */
async function createTenantAsRoot(t: ExecutionContext, sys: TestSystem, name: string): Promise<void> {
  const root = await tokenFor(sys.tokenUrl!, "root", "rootpw");
  const created = await api(sys.baseUrl, "POST", "/tenants", {
    user: "root",
    tenant: "superadmin",
    headers: bearer(root),
    body: { tenant: { name, workers: 0 } },
  });
  t.is(created.status, 200, created.text);
}

test("event streams: 401 without a token or with another user's; a revoked token's stream is closed with a message", async (t) => {
  const { sys } = t.context;
  const tokenUrl = sys.tokenUrl!;
  await createTenantAsRoot(t, sys, "acme");
  const ops = { user: "ops", tenant: "acme" };

  const noToken = await openSse(sys.baseUrl, ops, "00000001");
  t.is(noToken.status, 401);
  t.like(noToken.body, { status: 401, error: "unauthorized" });
  t.like(await openEventSocket(sys.baseUrl, ops), { refused: true, status: 401 });
  const alice = await tokenFor(tokenUrl, "alice", "alicepw");
  const borrowed = await openEventSocket(sys.baseUrl, ops, { headers: bearer(alice) });
  t.like(borrowed, { refused: true, status: 401 });
  t.regex(JSON.stringify((borrowed as { body: unknown }).body), /belongs to user alice/);

  // A gateway of its own with a short heartbeat, so the revocation is seen quickly.
  const nc = await connectNats({ url: sys.nats.url, name: "events-auth-gateway" });
  const security = await openGatewaySecurity({ nc, log: silentLogger, redisUrl: sys.redis!.url, tokenUrl });
  const gateway = await startGateway({ nc, log: silentLogger, security, host: "127.0.0.1", port: 0, events: { heartbeatMs: 200 } });
  t.teardown(async () => {
    await gateway.stop();
    await security.stop();
    await nc.close();
  });
  const token = await tokenFor(tokenUrl, "ops", "opspw");
  const socket = opened(await openEventSocket(`http://127.0.0.1:${gateway.port}/v2`, ops, { headers: bearer(token) }));
  socket.send({ type: "subscribe", tenant: true });
  await socket.waitFor((m) => m.some((x) => x.type === "subscribed"), "the tenant admin subscribed");
  t.is((await revoke(tokenUrl, token)).status, 200);
  const { code, reason } = await socket.closed;
  t.is(code, 1008);
  t.regex(reason, /token no longer holds/);
  t.like(socket.messages.at(-1), { type: "error", error: "token_invalid" });
});

test("a browser's event socket: identity and token offered as subprotocols, the protocol answered back; a bad token among them is a 401", async (t) => {
  const { sys } = t.context;
  const tokenUrl = sys.tokenUrl!;
  await createTenantAsRoot(t, sys, "globex");
  const ops = { user: "ops", tenant: "acme" };
  const token = await tokenFor(tokenUrl, "ops", "opspw");

  const socket = opened(await openEventSocket(sys.baseUrl, ops, { asSubprotocols: { token } }));
  t.teardown(() => socket.close());
  t.is(socket.protocol, "corral.events.v1");
  socket.send({ type: "subscribe", tenant: true });
  await socket.waitFor((m) => m.some((x) => x.type === "subscribed"), "the tenant admin subscribed through subprotocol credentials");

  t.like(await openEventSocket(sys.baseUrl, ops, { asSubprotocols: {} }), { refused: true, status: 401 });
  t.like(await openEventSocket(sys.baseUrl, ops, { asSubprotocols: { token: "not.a.token" } }), { refused: true, status: 401 });
  // The identity travels in the subprotocols too: in globex, ops is no admin, so it may not follow the tenant.
  const elsewhere = opened(await openEventSocket(sys.baseUrl, { user: "ops", tenant: "globex" }, { asSubprotocols: { token } }));
  t.teardown(() => elsewhere.close());
  elsewhere.send({ type: "subscribe", tenant: true });
  await elsewhere.waitFor((m) => m.some((x) => x.type === "error"), "the refusal");
  t.like(elsewhere.messages.find((x) => x.type === "error"), { status: 403 });
  t.regex(JSON.stringify(elsewhere.messages), /admin of tenant globex/);
});
