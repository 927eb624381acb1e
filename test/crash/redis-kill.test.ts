/**
 * Redis down or restarted (docs/operations.md, "Redis down or restarted"), against a running system with security on: redis-server is hung
 * (SIGSTOP), then killed (SIGKILL) and restarted empty on its port. Clusters keep working through the secured
 * gateway; login, revocation and node usage answer a quick 503 saying Redis is unavailable; a revoked token stays
 * refused; a verifier that never read the revocation list refuses every token. After the restart everything
 * recovers by itself: revocations are written back into the empty Redis and node usage is rebuilt from the stream.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@corral/shared";
import { openGatewaySecurity, type GatewaySecurity } from "@corral/gateway/testing";
import { api, type ApiResponse } from "../helpers/api.js";
import { simFixtureCatalog, waitForAssignment } from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { startRedis, type ServerHandle } from "../helpers/servers.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { bearer, requestToken, revoke, tokenFor } from "../helpers/tokens.js";

/** What the serial tests hand on (ava gives each test a shallow copy of the context: this object is shared). */
interface Shared {
  /** A token of ops, revoked before Redis went down. */
  revoked?: string;
  /** A verifier opened while Redis was down. */
  lateVerifier?: GatewaySecurity;
  /** The redis-server started again on the killed one's port. */
  restarted?: ServerHandle;
}
interface Context {
  sys: TestSystem;
  dir: string;
  /** A token of ops, never revoked until the last step. */
  live: string;
  shared: Shared;
}
const test = anyTest as TestFn<Context>;
const TENANT = "redisdown";
/** How quickly a Redis-dependent answer must come while Redis is gone or hung (redisCall gives up after 2 s). */
const QUICK_MS = 3_000;

test.before(async (t) => {
  t.context.shared = {};
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-redis-kill-"));
  const realmfile = join(t.context.dir, "realm.properties");
  await writeFile(realmfile, ["root: rootpw,superadmin", `ops: opspw,admin:${TENANT}`].join("\n"));
  const sys = await startSystem({
    clusters: 1,
    provisioners: 1,
    metrics: 1,
    reconcileIntervalMs: 500,
    security: { config: { "security.authentication.basic.realmfile": realmfile } },
  });
  t.context.sys = sys;
  const root = await tokenFor(sys.tokenUrl!, "root", "rootpw");
  const created = await api(sys.baseUrl, "POST", "/tenants", {
    user: "root",
    tenant: "superadmin",
    headers: bearer(root),
    body: { tenant: { name: TENANT, workers: 2 } },
  });
  if (created.status !== 200) throw new Error(`creating the tenant: ${created.text}`);
  await waitForAssignment(sys.nc, TENANT);
  t.context.live = await tokenFor(sys.tokenUrl!, "ops", "opspw");
  const imported = await asOps(t.context, "POST", "/import", { body: simFixtureCatalog() });
  if (imported.status !== 200) throw new Error(`importing the catalog: ${imported.text}`);
});
test.after.always(async (t) => {
  await t.context.shared.lateVerifier?.stop();
  await t.context.sys?.stop();
  await t.context.shared.restarted?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

/** A request of ops through the secured gateway, with the live token unless told. */
function asOps(c: Context, method: string, path: string, options: { body?: unknown; token?: string } = {}): Promise<ApiResponse<any>> {
  return api(c.sys.baseUrl, method, path, { user: "ops", tenant: TENANT, headers: bearer(options.token ?? c.live), body: options.body });
}

async function waitForActive(c: Context, id: string): Promise<void> {
  await eventually(
    async () => {
      const r = await asOps(c, "GET", `/clusters/${id}/status`);
      if (r.status !== 200) throw new Error(`status: HTTP ${r.status} ${r.text}`);
      if (r.body.status !== "pending" && r.body.status !== "active") throw new Error(`cluster settled as ${r.text}`);
      return r.body.status === "active" && r.body.actionstatus === "complete";
    },
    { what: `cluster ${id} active`, timeoutMs: 30_000, intervalMs: 100 },
  );
}

/** Runs `call`, asserting it answered a 503 saying Redis is unavailable, quickly. */
async function quick503(t: ExecutionContext, what: string, call: () => Promise<{ status: number; body: any; text: string }>): Promise<string> {
  const started = Date.now();
  const r = await call();
  const tookMs = Date.now() - started;
  t.is(r.status, 503, `${what}: ${r.text}`);
  t.is(r.body?.error, "service_unavailable", what);
  t.regex(String(r.body?.message), /^Redis is unavailable: /, what);
  t.true(tookMs < QUICK_MS, `${what} answered in ${tookMs} ms`);
  t.log(`${what}: 503 in ${tookMs} ms`);
  return r.body.message as string;
}

const usage = (c: Context) => asOps(c, "GET", "/metrics/nodes/usage");

test.serial("Redis hung (SIGSTOP): login and node usage answer 503 within the Redis call timeout; REST with a token works", async (t) => {
  const c = t.context;
  t.is((await usage(c)).status, 200, "node usage before the fault");
  c.shared.revoked = await tokenFor(c.sys.tokenUrl!, "ops", "opspw");
  t.is((await revoke(c.sys.tokenUrl!, c.shared.revoked)).status, 200);
  await eventually(async () => (await asOps(c, "GET", "/clusters", { token: c.shared.revoked })).status === 401, { what: "the revoked token refused" });

  process.kill(c.sys.redis!.pid, "SIGSTOP");
  try {
    await quick503(t, "login", () => requestToken(c.sys.tokenUrl!, "ops", "opspw"));
    await quick503(t, "node usage", () => usage(c));
    t.is((await asOps(c, "GET", "/clusters")).status, 200, "REST with a valid token");
  } finally {
    process.kill(c.sys.redis!.pid, "SIGCONT");
  }
});

test.serial("Redis killed (SIGKILL): clusters are created and operated; Redis features answer 503; revoked tokens stay refused", async (t) => {
  const c = t.context;
  process.kill(c.sys.redis!.pid, "SIGKILL");
  await c.sys.redis!.exited;

  const created = await asOps(c, "POST", "/clusters", { body: { name: "during-outage", clusterTemplate: "webapp", numMachines: 1 } });
  t.is(created.status, 200, created.text);
  const id = created.body.id as string;
  await waitForActive(c, id);
  const stopped = await asOps(c, "POST", `/clusters/${id}/services/stop`);
  t.is(stopped.status, 200, stopped.text);
  await waitForActive(c, id);

  t.regex(await quick503(t, "login", () => requestToken(c.sys.tokenUrl!, "ops", "opspw")), /failed logins cannot be counted/);
  t.regex(await quick503(t, "revocation", () => revoke(c.sys.tokenUrl!, c.live)), /cannot be revoked/);
  t.regex(await quick503(t, "node usage", () => usage(c)), /node usage cannot be read/);
  const refused = await asOps(c, "GET", "/clusters", { token: c.shared.revoked! });
  t.is(refused.status, 401, "the last revocation list read stays in force");
  t.regex(refused.text, /revoked/);

  // A gateway that starts now has never read the list: it opens, and refuses every token rather than guess.
  const opening = Date.now();
  const lateVerifier = await openGatewaySecurity({ nc: c.sys.nc, log: silentLogger, redisUrl: c.sys.redis!.url, tokenUrl: c.sys.tokenUrl! });
  c.shared.lateVerifier = lateVerifier;
  t.true(Date.now() - opening < 10_000, "opened without Redis");
  const late = await lateVerifier.authenticate(`Bearer ${c.live}`);
  t.like(late, { ok: false, denial: { status: 503, code: "service_unavailable" } });
});

test.serial("Redis restarted empty on its port: everything reconnects; revocations are written back; node usage catches up", async (t) => {
  const c = t.context;
  const password = c.sys.credentials?.redisPassword;
  c.shared.restarted = await startRedis({ port: c.sys.redis!.port, ...(password ? { password } : {}) });

  await eventually(async () => (await requestToken(c.sys.tokenUrl!, "ops", "opspw")).status === 200, {
    what: "logins work again",
    timeoutMs: 10_000,
    intervalMs: 200,
  });
  // The late verifier reads the list from the new Redis, into which the running verifiers wrote it back.
  const late = c.shared.lateVerifier!;
  await eventually(async () => (await late.authenticate(`Bearer ${c.live}`)).ok, { what: "the late verifier accepts tokens", timeoutMs: 10_000 });
  t.like(await late.authenticate(`Bearer ${c.shared.revoked!}`), { ok: false, denial: { status: 401, message: "the token has been revoked" } });

  // The cluster's node was created while Redis was down: its node-seconds are counted once usage caught up.
  const caughtUp = await eventually(
    async () => {
      const r = await usage(c);
      return r.status === 200 && r.body.data[0].value > 0 ? r.body : false;
    },
    { what: "node usage with the outage's node", timeoutMs: 30_000, intervalMs: 250 },
  );
  t.true(caughtUp.start * 1000 <= Date.now());

  t.is((await revoke(c.sys.tokenUrl!, c.live)).status, 200, "revocation works again");
  await eventually(async () => (await asOps(c, "GET", "/clusters")).status === 401, { what: "the revocation took effect" });
});
