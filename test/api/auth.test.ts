import anyTest, { type TestFn } from "ava";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callEndpoint, loadConfig, silentLogger } from "@corral/shared";
import { startAuthService } from "@corral/auth";
import { api } from "../helpers/api.js";
import { eventually } from "../helpers/eventually.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { bearer, requestToken, revoke, tokenFor } from "../helpers/tokens.js";

/** Security on, basic authentication against a realm file. */
const test = anyTest as TestFn<{ sys: TestSystem; dir: string; tokenUrl: string }>;

const md5 = (s: string) => createHash("md5").update(s).digest("hex");
const REALM = [
  "# realm file of the security tests",
  "root: rootpw,superadmin",
  "admin: adminpw", // named admin, but no role: an ordinary user once security is on
  "dave: davepw,admin",
  "carol: carolpw,admin:acme",
  "alice: alicepw,devs",
  `bob: MD5:${md5("bobpw")},devs`,
  "erin: OBF:1v2j1uum1xtv1zej1zer1xtn1uvk1v1v", // "password"
  "frank: frankpw",
  "gina: ginapw",
  "hank: hankpw",
].join("\n");
const EMPTY_CATALOG = { providers: [], hardwaretypes: [], imagetypes: [], services: [], clustertemplates: [] };

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-auth-test-"));
  const realmfile = join(t.context.dir, "realm.properties");
  await writeFile(realmfile, REALM);
  t.context.sys = await startSystem({
    security: {
      config: {
        "security.authentication.handlerClassName": "basic",
        "security.authentication.basic.realmfile": realmfile,
        // This file's tests fail logins on purpose; keep them clear of the throttle (auth-throttle tests it).
        "security.login.maxFailuresPerAddress": 0,
      },
    },
  });
  t.context.tokenUrl = t.context.sys.tokenUrl!;
  const root = await tokenFor(t.context.tokenUrl, "root", "rootpw");
  const created = await api(t.context.sys.baseUrl, "POST", "/tenants", {
    user: "root",
    tenant: "superadmin",
    headers: bearer(root),
    body: { tenant: { name: "acme", workers: 0 } },
  });
  if (created.status !== 200) throw new Error(`creating tenant acme: ${created.status} ${created.text}`);
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

test("token server - GET /token with realm credentials answers a Bearer token with OAuth's token headers", async (t) => {
  const r = await requestToken(t.context.tokenUrl, "alice", "alicepw");
  t.is(r.status, 200, r.text);
  t.is(r.headers.get("content-type"), "application/json;charset=UTF-8");
  t.is(r.headers.get("cache-control"), "no-store");
  t.is(r.headers.get("pragma"), "no-cache");
  t.deepEqual(Object.keys(r.body).sort(), ["access_token", "expires_in", "token_type"]);
  t.is(r.body.token_type, "Bearer");
  t.is(r.body.expires_in, 86400);
  t.regex(r.body.access_token, /^[A-Za-z0-9_-]{40,}$/);
});

test("token server - GET /extendedtoken answers the same shape with the extended lifetime; the token works", async (t) => {
  const extendedUrl = new URL("/extendedtoken", t.context.tokenUrl).href;
  const r = await requestToken(extendedUrl, "alice", "alicepw");
  t.is(r.status, 200, r.text);
  t.deepEqual(Object.keys(r.body).sort(), ["access_token", "expires_in", "token_type"]);
  t.is(r.body.expires_in, 604800);
  t.is(r.headers.get("cache-control"), "no-store");
  const call = await api(t.context.sys.baseUrl, "GET", "/providers", { user: "alice", tenant: "acme", headers: bearer(r.body.access_token) });
  t.is(call.status, 200, call.text);
  t.is((await requestToken(extendedUrl, "alice", "wrong")).status, 401);
  const post = await fetch(extendedUrl, { method: "POST" });
  t.is(post.status, 405);
  t.is(post.headers.get("allow"), "GET");
});

test("token server - MD5: and OBF: realm passwords log in", async (t) => {
  t.is((await requestToken(t.context.tokenUrl, "bob", "bobpw")).status, 200);
  t.is((await requestToken(t.context.tokenUrl, "erin", "password")).status, 200);
  t.is((await requestToken(t.context.tokenUrl, "bob", `MD5:${md5("bobpw")}`)).status, 401);
});

test("token server - missing or wrong credentials are a JSON 401 with a Basic challenge", async (t) => {
  for (const [user, password] of [
    [undefined, ""],
    ["alice", "wrong"],
    ["nobody", "alicepw"],
    ["alice", ""],
  ] as const) {
    const r = await requestToken(t.context.tokenUrl, user, password);
    t.is(r.status, 401, `${user}: ${r.text}`);
    t.is(r.headers.get("content-type"), "application/json;charset=UTF-8");
    t.regex(r.headers.get("www-authenticate") ?? "", /^Basic realm="corral"/);
    t.is(r.body.error, "unauthorized");
    t.falsy(r.body.access_token);
  }
  const bearerOnly = await fetch(t.context.tokenUrl, { headers: { authorization: "Bearer abc" } });
  t.is(bearerOnly.status, 401);
});

test("token server - other paths are 404 and other methods 405", async (t) => {
  t.is((await fetch(new URL("/nope", t.context.tokenUrl))).status, 404);
  const post = await fetch(t.context.tokenUrl, { method: "POST" });
  t.is(post.status, 405);
  t.is(post.headers.get("allow"), "GET, DELETE");
});

test("security - /status and /v2/status need a token: 401 naming the token server, 200 with one", async (t) => {
  const { sys, tokenUrl } = t.context;
  const root = sys.baseUrl.replace(/\/v2$/, "");
  for (const url of [`${sys.baseUrl}/status`, `${root}/status`]) {
    const r = await api(url, "GET", "");
    t.is(r.status, 401, url);
    t.is(r.body.error, "unauthorized");
    t.deepEqual(r.body.details, { auth_uri: [tokenUrl] });
    t.is(r.headers.get("www-authenticate"), 'Bearer realm="corral"');
  }
  const token = await tokenFor(tokenUrl, "alice", "alicepw");
  t.is((await api(`${sys.baseUrl}/status`, "GET", "", { headers: bearer(token) })).status, 200);
  t.is((await api(`${root}/status`, "GET", "", { headers: bearer(token) })).status, 200);
});

test("security - every API path needs the token before anything else", async (t) => {
  const { sys } = t.context;
  const r = await api(sys.baseUrl, "GET", "/providers", { user: "alice", tenant: "acme" });
  t.is(r.status, 401);
  t.is((await api(sys.baseUrl, "GET", "/no/such/path")).status, 401);
  const token = await tokenFor(t.context.tokenUrl, "alice", "alicepw");
  const ok = await api(sys.baseUrl, "GET", "/providers", { user: "alice", tenant: "acme", headers: bearer(token) });
  t.is(ok.status, 200, ok.text);
  t.deepEqual(ok.body, []);
  t.is((await api(sys.baseUrl, "GET", "/no/such/path", { headers: bearer(token) })).status, 404);
});

test("security - bad tokens are 401 invalid_token; other schemes are 401", async (t) => {
  const { sys, tokenUrl } = t.context;
  const good = await tokenFor(tokenUrl, "alice", "alicepw");
  const bytes = Buffer.from(good, "base64url");
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
  const cases: Array<[string, string, RegExp]> = [
    ["malformed", "Bearer not-a-token", /malformed/],
    ["tampered", `Bearer ${bytes.toString("base64url")}`, /signature/],
  ];
  for (const [what, header, reason] of cases) {
    const r = await api(sys.baseUrl, "GET", "/providers", { user: "alice", tenant: "acme", headers: { authorization: header } });
    t.is(r.status, 401, what);
    t.is(r.body.error, "invalid_token", what);
    t.regex(r.body.message, reason, what);
    t.regex(r.headers.get("www-authenticate") ?? "", /error="invalid_token"/, what);
  }
  const basic = `Basic ${Buffer.from("alice:alicepw").toString("base64")}`;
  const r = await api(sys.baseUrl, "GET", "/providers", { user: "alice", tenant: "acme", headers: { authorization: basic } });
  t.is(r.status, 401);
  t.regex(r.body.message, /Bearer/);
});

test("security - the token's user must be the Service-UserID it acts as", async (t) => {
  const { sys, tokenUrl } = t.context;
  const alice = await tokenFor(tokenUrl, "alice", "alicepw");
  const r = await api(sys.baseUrl, "GET", "/providers", { user: "bob", tenant: "acme", headers: bearer(alice) });
  t.is(r.status, 401);
  t.regex(r.body.message, /belongs to user alice/);
  t.is((await api(sys.baseUrl, "GET", "/providers", { tenant: "acme", headers: bearer(alice) })).status, 401);
});

test("security - token roles decide admin rights, not the user name", async (t) => {
  const { sys, tokenUrl } = t.context;
  const as = async (user: string, password: string, tenant: string, method: string, path: string, body?: unknown) =>
    api(sys.baseUrl, method, path, { user, tenant, headers: bearer(await tokenFor(tokenUrl, user, password)), body });

  // An ordinary user cannot administer, even named `admin`.
  t.is((await as("alice", "alicepw", "acme", "POST", "/import", EMPTY_CATALOG)).status, 403);
  t.is((await as("admin", "adminpw", "superadmin", "GET", "/tenants")).status, 401);
  t.is((await as("admin", "adminpw", "acme", "POST", "/import", EMPTY_CATALOG)).status, 403);
  t.is((await as("alice", "alicepw", "acme", "GET", "/export")).status, 200);
  // Role admin: tenant admin anywhere, not the superadmin.
  t.is((await as("dave", "davepw", "acme", "POST", "/import", EMPTY_CATALOG)).status, 200);
  t.is((await as("dave", "davepw", "superadmin", "GET", "/tenants")).status, 401);
  // Role admin:acme: tenant admin of acme only.
  t.is((await as("carol", "carolpw", "acme", "POST", "/import", EMPTY_CATALOG)).status, 200);
  t.is((await as("carol", "carolpw", "superadmin", "POST", "/import", EMPTY_CATALOG)).status, 403);
  // Role superadmin: the superadmin.
  const tenants = await as("root", "rootpw", "superadmin", "GET", "/tenants");
  t.is(tenants.status, 200, tenants.text);
  t.true((tenants.body as Array<{ name: string }>).some((x) => x.name === "acme"));
});

test("security - a revoked token is refused; the user's other tokens still work", async (t) => {
  const { sys, tokenUrl } = t.context;
  const first = await tokenFor(tokenUrl, "frank", "frankpw");
  const second = await tokenFor(tokenUrl, "frank", "frankpw");
  const call = (token: string) => api(sys.baseUrl, "GET", "/providers", { user: "frank", tenant: "acme", headers: bearer(token) });
  t.is((await call(first)).status, 200);
  const revoked = await revoke(tokenUrl, first);
  t.is(revoked.status, 200, revoked.text);
  const refused = await eventually(async () => {
    const r = await call(first);
    return r.status === 401 ? r : false;
  }, { what: "the revoked token is refused" });
  t.regex(refused.body.message, /revoked/);
  t.is((await call(second)).status, 200);
  t.is((await revoke(tokenUrl, first)).status, 401, "revoking twice");
  t.is((await revoke(tokenUrl, "garbage")).status, 401);
});

test("security - DELETE /tokens/{user} revokes all of a user's tokens; only the user or the superadmin may", async (t) => {
  const { sys, tokenUrl } = t.context;
  const gina = [await tokenFor(tokenUrl, "gina", "ginapw"), await tokenFor(tokenUrl, "gina", "ginapw")];
  const hank = await tokenFor(tokenUrl, "hank", "hankpw");
  const call = (user: string, token: string) => api(sys.baseUrl, "GET", "/providers", { user, tenant: "acme", headers: bearer(token) });
  const byOther = await revoke(tokenUrl, hank, "/tokens/gina");
  t.is(byOther.status, 403, byOther.text);
  const dave = await tokenFor(tokenUrl, "dave", "davepw");
  t.is((await revoke(tokenUrl, dave, "/tokens/gina")).status, 403, "a tenant admin is not the superadmin");
  const root = await tokenFor(tokenUrl, "root", "rootpw");
  t.is((await revoke(tokenUrl, root, "/tokens/gina")).status, 200);
  for (const token of gina) {
    await eventually(async () => (await call("gina", token)).status === 401, { what: "gina's tokens are refused" });
  }
  t.is((await call("hank", hank)).status, 200);
  // Tokens issued afterwards work; the user may revoke her own.
  await eventually(async () => (await call("gina", await tokenFor(tokenUrl, "gina", "ginapw"))).status === 200, {
    what: "a new token of gina works",
  });
  const fresh = await tokenFor(tokenUrl, "gina", "ginapw");
  t.is((await revoke(tokenUrl, fresh, "/tokens/gina")).status, 200);
  await eventually(async () => (await call("gina", fresh)).status === 401, { what: "gina revoked her own tokens" });
});

test("security - an expired token is refused", async (t) => {
  const { sys } = t.context;
  // A second token server on the same keys, whose clock is two days behind: its tokens expired a day ago.
  const past = await startAuthService({
    nc: sys.nc,
    log: silentLogger,
    config: sys.securityConfig!,
    clock: () => Date.now() - 2 * 86400_000,
  });
  t.teardown(() => past.stop());
  const token = await tokenFor(past.tokenUrl, "alice", "alicepw");
  const r = await api(sys.baseUrl, "GET", "/providers", { user: "alice", tenant: "acme", headers: bearer(token) });
  t.is(r.status, 401);
  t.is(r.body.error, "invalid_token");
  t.regex(r.body.message, /expired/);
});

test("security - a token lives security.token.expiration.seconds", async (t) => {
  const { sys } = t.context;
  const short = await startAuthService({
    nc: sys.nc,
    log: silentLogger,
    config: loadConfig({ overrides: { ...configOf(sys), "security.token.expiration.seconds": 1 } }),
  });
  t.teardown(() => short.stop());
  const r = await requestToken(short.tokenUrl, "alice", "alicepw");
  t.is(r.body.expires_in, 1);
  const call = () => api(sys.baseUrl, "GET", "/providers", { user: "alice", tenant: "acme", headers: bearer(r.body.access_token) });
  t.is((await call()).status, 200);
  await eventually(async () => (await call()).status === 401, { what: "the 1 s token expired", timeoutMs: 5000 });
});

test("security - corral.auth.verify answers a token's claims over NATS, 401 for a bad one", async (t) => {
  const { sys, tokenUrl } = t.context;
  const token = await tokenFor(tokenUrl, "dave", "davepw");
  const claims = await callEndpoint(sys.nc, "auth.verify", { token });
  t.is(claims.userId, "dave");
  t.deepEqual(claims.roles, ["admin"]);
  t.true(claims.expiresAt > Date.now() + 86000_000);
  const err = await t.throwsAsync(callEndpoint(sys.nc, "auth.verify", { token: "bad" }));
  t.is((err as { status?: number }).status, 401);
});

/** The overrides startSystem used, to derive another token server's configuration from. */
function configOf(sys: TestSystem): Record<string, string | number | boolean> {
  const c = sys.securityConfig!;
  return {
    "security.enabled": true,
    "redis.url": c.get("redis.url"),
    "security.auth.server.address": "127.0.0.1",
    "security.auth.server.bind.port": 0,
    "security.authentication.handlerClassName": c.get("security.authentication.handlerClassName"),
    "security.authentication.basic.realmfile": c.get("security.authentication.basic.realmfile"),
  };
}
