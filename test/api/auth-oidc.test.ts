import anyTest, { type TestFn } from "ava";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { decodeProtectedHeader, generateKeyPair, SignJWT } from "jose";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { decode, entriesOfAuditMessage, streams, type AuditEntry } from "@corral/contracts";
import { loadConfig, silentLogger } from "@corral/shared";
import { readOidcSettings } from "@corral/auth/internal";
import { freePort } from "@corral/deploy";
import { openGatewaySecurity, openTenantDirectory } from "@corral/gateway/testing";
import { api, type ApiResponse } from "../helpers/api.js";
import { eventually } from "../helpers/eventually.js";
import { startOidcProvider, TEST_SCOPES, type TestClient, type TestOidcProvider } from "../helpers/oidc-provider.js";
import { CookieJar, visit } from "../helpers/redirects.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { bearer, startTokenServer, tokenFor } from "../helpers/tokens.js";

/**
 * Single sign-on against a real OpenID Connect provider (oidc-provider, test/helpers/oidc-provider.ts): a browser's
 * sign-in through the token server (plain HTTP following redirects, with cookies), the provider's JWTs as Bearer
 * tokens at the gateway (audience, expiry, rotated keys), the claims that give no user, no tenant or no rights, and
 * the audit log's entries of sign-ins.
 * Serial: some tests change the provider's keys or token lifetime.
 */
interface Context {
  sys: TestSystem;
  dir: string;
  idp: TestOidcProvider;
  /** The token server's origin (`http://127.0.0.1:<port>`). */
  tokenServer: string;
  corral: TestClient;
  other: TestClient;
}
const test = anyTest as TestFn<Context>;

const ACCOUNTS = {
  alice: { preferred_username: "alice", tenant: "acme", groups: ["devs"] },
  ada: { preferred_username: "ada", tenant: "acme", groups: ["devs", "corral-admin"] },
  ghost: { preferred_username: "ghost", tenant: "nowhere" },
  nameless: { tenant: "acme" },
  // Groups named like Corral's roles give nothing: only the configured values count.
  sam: { preferred_username: "sam", tenant: "superadmin", groups: ["superadmin", "admin", "corral-admin"] },
};

const oidcConfig = (idp: TestOidcProvider, tokenPort: number) => ({
  "security.auth.server.bind.port": tokenPort,
  "security.oidc.issuer": idp.issuer,
  "security.oidc.providerName": "TestIdP",
  "security.oidc.clientId": "corral",
  "security.oidc.clientSecret": "corral-secret",
  "security.oidc.scopes": TEST_SCOPES,
  "security.oidc.bearer.enabled": true,
  "security.oidc.jwksCooldownSeconds": 1,
});

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-oidc-"));
  const realmfile = join(t.context.dir, "realm.properties");
  await writeFile(realmfile, "root: rootpw,superadmin\n");
  const idp = (t.context.idp = await startOidcProvider(ACCOUNTS));
  const tokenPort = await freePort();
  t.context.tokenServer = `http://127.0.0.1:${tokenPort}`;
  t.context.corral = { client_id: "corral", client_secret: "corral-secret", redirect_uris: [`${t.context.tokenServer}/oidc/callback`] };
  t.context.other = { client_id: "other-app", client_secret: "other-secret", redirect_uris: ["http://127.0.0.1:9/callback"] };
  await idp.setClients([t.context.corral, t.context.other]);
  t.context.sys = await startSystem({ security: { config: { "security.authentication.basic.realmfile": realmfile, ...oidcConfig(idp, tokenPort) } } });
  const root = await tokenFor(t.context.sys.tokenUrl!, "root", "rootpw");
  for (const name of ["acme", "beta"]) {
    const r = await api(t.context.sys.baseUrl, "POST", "/tenants", { user: "root", tenant: "superadmin", headers: bearer(root), body: { tenant: { name, workers: 0 } } });
    if (r.status !== 200) throw new Error(`creating tenant ${name}: ${r.status} ${r.text}`);
  }
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  await t.context.idp?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

/** A call as `user` of `tenant` with a Bearer token. */
function call(t: { context: Context }, token: string, user: string, tenant: string, path = "/providers"): Promise<ApiResponse<{ error: string; message: string }>> {
  return api(t.context.sys.baseUrl, "GET", path, { user, tenant, headers: bearer(token) });
}
/** A route for tenant admins only (401 for a user; a tenant admin gets past the check to a 404). */
const ADMIN_ROUTE = "/providers/none/hosts";

/** A browser's sign-in through the token server, as `account` (the test provider signs in its login_hint). */
function signIn(t: { context: Context }, account: string, jar = new CookieJar(), headers: Record<string, string> = {}) {
  return visit(`${t.context.tokenServer}/oidc/login?login_hint=${encodeURIComponent(account)}`, { jar, headers });
}

test.serial("browser sign-in - through the provider with PKCE, state and nonce; the token acts in the tenant of the claim", async (t) => {
  const { idp } = t.context;
  const jar = new CookieJar();
  const done = await signIn(t, "alice", jar);
  t.is(done.response.status, 200, await done.response.clone().text());
  const body = (await done.response.json()) as { access_token: string; token_type: string; expires_in: number; user: string; tenant: string; role: string };
  t.like(body, { token_type: "Bearer", expires_in: 86400, user: "alice", tenant: "acme", role: "user" });
  const authorize = done.visited.find((u) => u.origin === idp.issuer && u.pathname === "/auth");
  t.truthy(authorize, `went through the provider: ${done.visited.map((u) => u.href).join(" -> ")}`);
  t.is(authorize!.searchParams.get("code_challenge_method"), "S256");
  t.truthy(authorize!.searchParams.get("code_challenge"));
  t.truthy(authorize!.searchParams.get("state"));
  t.truthy(authorize!.searchParams.get("nonce"));
  t.is(authorize!.searchParams.get("redirect_uri"), `${t.context.tokenServer}/oidc/callback`);
  t.false(jar.has("corral_oidc_state"), "the state cookie is cleared");

  const token = body.access_token;
  t.is((await call(t, token, "alice", "acme")).status, 200);
  t.is((await call(t, token, "alice", "acme", ADMIN_ROUTE)).status, 401, "alice is no tenant admin");
  const elsewhere = await call(t, token, "alice", "beta");
  t.is(elsewhere.status, 401);
  t.regex(elsewhere.body.message, /issued for tenant acme, not for Service-TenantID beta/);
  t.is((await call(t, token, "bob", "acme")).status, 401, "another Service-UserID");

  const ada = (await (await signIn(t, "ada")).response.json()) as { access_token: string; role: string };
  t.is(ada.role, "admin");
  t.is((await call(t, ada.access_token, "ada", "acme", ADMIN_ROUTE)).status, 404, "ada is the admin of acme");
});

test.serial("browser sign-in - the callback takes only this browser's state, and each sign-in once", async (t) => {
  const jar = new CookieJar();
  const atCallback = await visit(`${t.context.tokenServer}/oidc/login?login_hint=alice`, { jar, stopAt: (u) => u.pathname === "/oidc/callback" });
  const callback = atCallback.location!;
  t.truthy(callback, "the provider sends the browser back to the callback");
  const state = callback.searchParams.get("state")!;

  const stranger = await visit(callback, { jar: new CookieJar() });
  t.is(stranger.response.status, 400, "another browser (no state cookie): login CSRF");
  t.regex(((await stranger.response.json()) as { message: string }).message, /did not start in this browser/);
  const forged = await fetch(callback, { headers: { cookie: "corral_oidc_state=forged" } });
  t.is(forged.status, 400, "a cookie for another state");

  const first = await visit(callback, { jar });
  t.is(first.response.status, 200, await first.response.clone().text());
  const replay = await fetch(callback, { headers: { cookie: `corral_oidc_state=${state}` } });
  t.is(replay.status, 400, "the same state twice");
  t.regex(((await replay.json()) as { message: string }).message, /expired or was already used/);
});

test.serial("browser sign-in - a tenant claim naming no tenant is 403; no user claim is 403; the provider's refusal is 401", async (t) => {
  const ghost = await signIn(t, "ghost");
  t.is(ghost.response.status, 403);
  t.regex(((await ghost.response.json()) as { message: string }).message, /tenant nowhere, named by the identity provider's tenant claim, does not exist/);

  const page = await signIn(t, "ghost", new CookieJar(), { accept: "text/html,application/xhtml+xml" });
  t.is(page.response.status, 403, "a browser gets a page");
  t.regex(page.response.headers.get("content-type") ?? "", /text\/html/);
  t.regex(await page.response.text(), /tenant nowhere, named by the identity provider&#39;s tenant claim, does not exist/);

  const nameless = await signIn(t, "nameless");
  t.is(nameless.response.status, 403);
  t.regex(((await nameless.response.json()) as { message: string }).message, /no preferred_username claim/);

  const unknown = await signIn(t, "mallory");
  t.is(unknown.response.status, 401);
  t.regex(((await unknown.response.json()) as { message: string }).message, /refused the sign-in \(access_denied/);
});

test.serial("bearer - the provider's ID tokens act as their user in the tenant of their claim", async (t) => {
  const { idp, corral } = t.context;
  const alice = (await idp.tokensFor(corral, "alice")).idToken;
  t.is((await call(t, alice, "alice", "acme")).status, 200);
  t.is((await call(t, alice, "alice", "acme", ADMIN_ROUTE)).status, 401, "a user");
  const impostor = await call(t, alice, "bob", "acme");
  t.is(impostor.status, 401);
  t.regex(impostor.body.message, /belongs to user alice, not to Service-UserID bob/);
  t.is((await call(t, alice, "alice", "beta")).status, 401, "another tenant");
  const ada = (await idp.tokensFor(corral, "ada")).idToken;
  t.is((await call(t, ada, "ada", "acme", ADMIN_ROUTE)).status, 404, "the admin of acme");
  t.is((await call(t, ada, "ada", "beta", ADMIN_ROUTE)).status, 401, "not of beta");
});

test.serial("bearer - a token for another audience is refused", async (t) => {
  const { idp, other } = t.context;
  const token = (await idp.tokensFor(other, "alice")).idToken;
  const r = await call(t, token, "alice", "acme");
  t.is(r.status, 401);
  t.is(r.body.error, "invalid_token");
  t.regex(r.body.message, /not meant for Corral \(its audience is another\)/);
});

test.serial("bearer - an expired token is refused", async (t) => {
  const { idp, corral } = t.context;
  idp.idTokenTtlSeconds = 1;
  const token = await idp.tokensFor(corral, "alice").finally(() => (idp.idTokenTtlSeconds = 3600));
  await sleep(2_100);
  const r = await call(t, token.idToken, "alice", "acme");
  t.is(r.status, 401);
  t.regex(r.body.message, /the token has expired/);
});

test.serial("bearer - a tenant claim naming no tenant is refused", async (t) => {
  const ghost = (await t.context.idp.tokensFor(t.context.corral, "ghost")).idToken;
  const there = await call(t, ghost, "ghost", "nowhere");
  t.is(there.status, 401);
  t.regex(there.body.message, /tenant nowhere does not exist/);
  const elsewhere = await call(t, ghost, "ghost", "acme");
  t.is(elsewhere.status, 401);
  t.regex(elsewhere.body.message, /issued for tenant nowhere, not for Service-TenantID acme/);
});

test.serial("bearer and browser - after the provider rotates its signing key, its new tokens are accepted", async (t) => {
  const { idp, corral } = t.context;
  const before = (await idp.tokensFor(corral, "alice")).idToken;
  t.is((await call(t, before, "alice", "acme")).status, 200, "the gateway has read the keys");
  const kid = await idp.rotateKeys();
  await sleep(1_100); // the JWKS cooldown of this system
  const after = (await idp.tokensFor(corral, "alice")).idToken;
  t.is(decodeProtectedHeader(after).kid, kid, "signed with the new key");
  t.is((await call(t, after, "alice", "acme")).status, 200, "the gateway read the keys again");
  t.is((await signIn(t, "alice")).response.status, 200, "the token server checks ID tokens of the new key");

  // A token the provider did not sign: a key it does not publish.
  const { privateKey } = await generateKeyPair("RS256");
  const forged = await new SignJWT({ preferred_username: "alice", tenant: "acme", groups: ["corral-admin"] })
    .setProtectedHeader({ alg: "RS256", kid: "forged" })
    .setIssuer(idp.issuer)
    .setAudience("corral")
    .setSubject("alice")
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(privateKey);
  const r = await call(t, forged, "alice", "acme");
  t.is(r.status, 401);
  t.regex(r.body.message, /signed with a key the identity provider does not publish/);
});

test.serial("bearer - nobody is the superadmin through the provider unless superadminRole says so", async (t) => {
  const { sys, idp, corral } = t.context;
  const sam = (await idp.tokensFor(corral, "sam")).idToken;
  const tenants = await call(t, sam, "sam", "superadmin", "/tenants");
  t.is(tenants.status, 401, "groups superadmin and admin at the provider give no superadmin");
  t.is((await call(t, sam, "sam", "superadmin", ADMIN_ROUTE)).status, 404, "corral-admin: the admin of tenant superadmin");

  const directory = await openTenantDirectory(sys.nc, silentLogger);
  t.teardown(() => directory.stop());
  const identify = async (overrides: Record<string, string | boolean>) => {
    const config = loadConfig({ overrides: { ...oidcConfig(idp, 0), "security.enabled": true, ...overrides } });
    const security = await openGatewaySecurity({ nc: sys.nc, log: silentLogger, redisUrl: sys.redis!.url, tokenUrl: sys.tokenUrl!, oidc: readOidcSettings(config) });
    t.teardown(() => security.stop());
    const auth = await security.authenticate(`Bearer ${sam}`);
    if (!auth.ok) return auth.denial.message;
    return (await auth.session.identify({ userId: "sam", tenant: "superadmin", role: "user" }, directory)).role;
  };
  t.is(await identify({}), "admin");
  t.is(await identify({ "security.oidc.superadminRole": "superadmin" }), "superadmin", "configured explicitly");
  t.is(await identify({ "security.oidc.bearer.enabled": false }), "identity provider tokens are not accepted here; get a token at the token server");
});

/** Every audit entry of the callback the token server recorded so far (read from the stream, as the metrics service reads it). */
async function callbackEntries(nc: NatsConnection): Promise<AuditEntry[]> {
  const jsm = await jetstreamManager(nc);
  const { state } = await jsm.streams.info(streams.audit);
  const entries: AuditEntry[] = [];
  for (let seq = state.first_seq; seq > 0 && seq <= state.last_seq; seq++) {
    const stored = await jsm.streams.getMessage(streams.audit, { seq }).catch(() => undefined);
    if (stored) entries.push(...entriesOfAuditMessage(decode(stored.data)));
  }
  return entries.filter((e) => e.route === "/oidc/callback");
}

test.serial("audit - each sign-in at the callback is recorded like a password login, without its code, state or token", async (t) => {
  const { sys } = t.context;
  const before = (await callbackEntries(sys.nc)).length;
  const done = await signIn(t, "ada");
  t.is(done.response.status, 200);
  const token = ((await done.response.json()) as { access_token: string }).access_token;
  const callback = done.visited.find((u) => u.pathname === "/oidc/callback")!;
  const code = callback.searchParams.get("code")!;
  const state = callback.searchParams.get("state")!;
  t.truthy(code, "the provider answered with a code");
  t.is((await signIn(t, "ghost")).response.status, 403);
  t.is((await signIn(t, "mallory")).response.status, 401);

  let recorded: AuditEntry[] = [];
  await eventually(
    async () => {
      recorded = (await callbackEntries(sys.nc)).slice(before);
      return recorded.length >= 3;
    },
    { what: "three callback entries", timeoutMs: 10_000 },
  );
  t.is(recorded.length, 3, "each sign-in recorded once");
  const [ada, ghost, mallory] = recorded;
  t.like(ada, { tenant: "acme", user: "ada", role: "admin", method: "GET", action: "auth.login", target: "", status: 200, source: "127.0.0.1" });
  t.regex(ada!.requestId, /.+/);
  t.like(ghost, { tenant: "nowhere", user: "ghost", action: "auth.login", status: 403 }, "a tenant that does not exist");
  t.like(mallory, { tenant: "", user: "", role: "", action: "auth.login", status: 401 }, "the provider refused: nobody was named");
  const text = JSON.stringify(await callbackEntries(sys.nc));
  for (const secret of [code, state, token]) t.false(text.includes(secret), "no code, state or token in the audit log");
});

test.serial("the gateway's 401 names where a browser signs in", async (t) => {
  const r = await api(t.context.sys.baseUrl, "GET", "/clusters", { user: "alice", tenant: "acme" });
  t.is(r.status, 401);
  t.deepEqual(r.body.details.sso, { provider: "TestIdP", url: `${t.context.tokenServer}/oidc/login` });
});

test.serial("a provider that cannot be reached makes sign-ins 503, and the token server starts regardless", async (t) => {
  const closed = await freePort();
  const svc = await startTokenServer(
    { context: { sys: t.context.sys, dir: t.context.dir }, teardown: (fn) => t.teardown(fn) },
    {
      "security.authentication.basic.realmfile": join(t.context.dir, "realm.properties"),
      ...oidcConfig(t.context.idp, 0),
      "security.oidc.issuer": `http://127.0.0.1:${closed}`,
    },
  );
  const r = await fetch(new URL("/oidc/login", svc.tokenUrl), { redirect: "manual" });
  t.is(r.status, 503);
  t.regex(((await r.json()) as { message: string }).message, /cannot be reached/);
  t.is((await fetch(svc.tokenUrl, { headers: { authorization: `Basic ${Buffer.from("root:rootpw").toString("base64")}` } })).status, 200, "password logins go on");
});
