import anyTest, { type TestFn } from "ava";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callEndpoint, silentLogger } from "@corral/shared";
import { openGatewaySecurity, openTenantDirectory, type TenantUids } from "@corral/gateway/testing";
import { api, type ApiResponse } from "../helpers/api.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { bearer, requestToken, tokenFor } from "../helpers/tokens.js";

/**
 * Security on: a token whose login named a tenant (`Service-TenantID` at `GET /token`) is bound to that tenant's
 * uid, so it does not outlive the tenant: a tenant created later under the same name refuses it. The clusters
 * and metrics services run because deleting a tenant waits for their purge.
 */
const test = anyTest as TestFn<{ sys: TestSystem; dir: string; root: string }>;

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-auth-tenant-"));
  const realmfile = join(t.context.dir, "realm.properties");
  await writeFile(realmfile, ["root: rootpw,superadmin", "alice: alicepw", "bob: bobpw"].join("\n"));
  t.context.sys = await startSystem({
    clusters: 1,
    metrics: 1,
    webhooks: 1,
    security: { config: { "security.authentication.basic.realmfile": realmfile } },
  });
  t.context.root = await tokenFor(t.context.sys.tokenUrl!, "root", "rootpw");
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

/** A call of the superadmin (root's token) in tenant `superadmin`. */
function asRoot(t: { context: { sys: TestSystem; root: string } }, method: string, path: string, body?: unknown): Promise<ApiResponse> {
  return api(t.context.sys.baseUrl, method, path, { user: "root", tenant: "superadmin", headers: bearer(t.context.root), body });
}

async function createTenant(t: { context: { sys: TestSystem; root: string } }, name: string): Promise<void> {
  const r = await asRoot(t, "POST", "/tenants", { tenant: { name, workers: 0 } });
  if (r.status !== 200) throw new Error(`creating tenant ${name}: ${r.status} ${r.text}`);
}

test("tenant binding - a token bound to a tenant is refused by a tenant created later under the same name; a fresh login works", async (t) => {
  const { sys } = t.context;
  const tokenUrl = sys.tokenUrl!;
  await createTenant(t, "acme");
  const bound = await tokenFor(tokenUrl, "alice", "alicepw", "acme");
  const unbound = await tokenFor(tokenUrl, "alice", "alicepw");
  const providers = (token: string) => api(sys.baseUrl, "GET", "/providers", { user: "alice", tenant: "acme", headers: bearer(token) });
  // Used before the delete, so the gateway's tenant cache is warm.
  t.is((await providers(bound)).status, 200);

  t.is((await asRoot(t, "DELETE", "/tenants/acme")).status, 200);
  t.is((await providers(bound)).status, 401, "no tenant acme");
  await createTenant(t, "acme");

  const refused = await providers(bound);
  t.is(refused.status, 401, refused.text);
  t.regex(refused.body.message, /issued for a tenant that no longer exists/);
  const fresh = await tokenFor(tokenUrl, "alice", "alicepw", "acme");
  t.is((await providers(fresh)).status, 200, "a fresh login works");
  t.is((await providers(bound)).status, 401, "still refused once the cache knows the new tenant");
  // A login that named no tenant gives the user's token in every tenant: nothing of the deleted tenant's.
  t.is((await providers(unbound)).status, 200, "an unbound token is not the deleted tenant's");

  const before = await callEndpoint(sys.nc, "auth.verify", { token: bound });
  const after = await callEndpoint(sys.nc, "auth.verify", { token: fresh });
  t.is(after.tenant?.name, "acme", "corral.auth.verify names the tenant");
  t.truthy(after.tenant?.uid);
  t.not(after.tenant?.uid, before.tenant?.uid, "the uids of the two tenants acme differ");
});

test("tenant binding - a bound token acts only in its tenant; a login naming an unknown tenant is 401, an invalid name 400", async (t) => {
  const { sys } = t.context;
  const tokenUrl = sys.tokenUrl!;
  await createTenant(t, "north");
  await createTenant(t, "south");
  const token = await tokenFor(tokenUrl, "bob", "bobpw", "north");
  const providers = (tenant: string) => api(sys.baseUrl, "GET", "/providers", { user: "bob", tenant, headers: bearer(token) });
  t.is((await providers("north")).status, 200);
  const other = await providers("south");
  t.is(other.status, 401, other.text);
  t.regex(other.body.message, /issued for tenant north, not for Service-TenantID south/);

  const unknown = await requestToken(tokenUrl, "bob", "bobpw", "nowhere");
  t.is(unknown.status, 401, unknown.text);
  t.regex(unknown.body.message, /tenant nowhere does not exist/);
  const invalid = await requestToken(tokenUrl, "bob", "bobpw", "no/such");
  t.is(invalid.status, 400, invalid.text);
  const wrongPassword = await requestToken(tokenUrl, "bob", "wrong", "nowhere");
  t.is(wrongPassword.status, 401);
  t.regex(wrongPassword.body.message, /invalid user name or password/, "the tenant is looked up only after the password");
});

test("tenant binding - a gateway whose cache has not seen a re-created tenant yet asks the bucket before refusing", async (t) => {
  const { sys } = t.context;
  const tokenUrl = sys.tokenUrl!;
  await createTenant(t, "lagging");
  const old = await tokenFor(tokenUrl, "alice", "alicepw", "lagging");
  t.is((await asRoot(t, "DELETE", "/tenants/lagging")).status, 200);
  await createTenant(t, "lagging");
  const fresh = await tokenFor(tokenUrl, "alice", "alicepw", "lagging");

  const security = await openGatewaySecurity({ nc: sys.nc, log: silentLogger, redisUrl: sys.redis!.url, tokenUrl });
  const directory = await openTenantDirectory(sys.nc, silentLogger);
  t.teardown(async () => {
    directory.stop();
    await security.stop();
  });
  const oldUid = (await callEndpoint(sys.nc, "auth.verify", { token: old })).tenant!.uid;
  // A cache that still holds the deleted tenant's uid, as a watch that lags the bucket would.
  const lagging: TenantUids = { cachedUidOf: () => oldUid, freshUidOf: (tenant) => directory.freshUidOf(tenant) };
  const identify = async (token: string) => {
    const auth = await security.authenticate(`Bearer ${token}`);
    if (!auth.ok) throw new Error(auth.denial.message);
    return auth.session.identify({ userId: "alice", tenant: "lagging", role: "user" }, lagging);
  };
  t.like(await identify(fresh), { userId: "alice", tenant: "lagging" }, "the fresh token is accepted after the re-read");
});
