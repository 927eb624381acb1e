import anyTest, { type TestFn } from "ava";
import type { VerifiedToken } from "@corral/contracts";
import { callEndpoint, createLogger, loadConfig, silentLogger } from "@corral/shared";
import { startAuthService, type AuthService } from "@corral/auth";
import { freePort } from "@corral/deploy";
import { api } from "../helpers/api.js";
import { startSlapd, type SlapdHandle } from "../helpers/slapd.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { bearer, requestToken, tokenFor } from "../helpers/tokens.js";

/** Security on with the LDAP handler against a real slapd (users in ou=people, groupOfNames in ou=groups). */
const test = anyTest as TestFn<{ ldap: SlapdHandle; sys: TestSystem }>;

const USERS = [
  { uid: "alice", password: "alicepw", cn: "Alice Example" },
  { uid: "bob", password: "bobpw" },
  { uid: "o'neil, jr", password: "oneilpw" }, // a name that needs DN escaping
];
const GROUPS = [
  { cn: "superadmin", members: ["alice"] },
  { cn: "devs", members: ["alice", "bob"] },
];

/** Handler properties for binding as `uid=<user>,ou=people,...` (no service account). */
function directBind(ldap: SlapdHandle): Record<string, string | number | boolean> {
  return {
    "security.authentication.handlerClassName": "co.cask.cdap.security.server.LDAPAuthenticationHandler",
    "security.authentication.handler.hostname": ldap.host,
    "security.authentication.handler.port": ldap.port,
    "security.authentication.handler.userBaseDn": ldap.peopleDn,
    "security.authentication.handler.userRdnAttribute": "uid",
    "security.authentication.handler.userObjectClass": "inetOrgPerson",
    "security.authentication.handler.roleBaseDn": ldap.groupsDn,
    "security.authentication.handler.roleNameAttribute": "cn",
    "security.authentication.handler.roleMemberAttribute": "member",
    "security.authentication.handler.roleObjectClass": "groupOfNames",
  };
}

test.before(async (t) => {
  t.context.ldap = await startSlapd({ users: USERS, groups: GROUPS });
  t.context.sys = await startSystem({ security: { config: { ...directBind(t.context.ldap), "security.login.maxFailuresPerAddress": 0 } } });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  await t.context.ldap?.stop();
});

/** Another token server on the same NATS and Redis with other handler properties. */
async function tokenServer(t: { context: { sys: TestSystem }; teardown(fn: () => unknown): void }, config: Record<string, unknown>, log = silentLogger): Promise<AuthService> {
  const base = t.context.sys.securityConfig!;
  const svc = await startAuthService({
    nc: t.context.sys.nc,
    log,
    config: loadConfig({
      overrides: {
        "security.enabled": true,
        "redis.url": base.get("redis.url"),
        "security.auth.server.address": "127.0.0.1",
        "security.auth.server.bind.port": 0,
        "security.login.maxFailuresPerAddress": 0,
        ...(config as Record<string, string | number | boolean>),
      },
    }),
  });
  t.teardown(() => svc.stop());
  return svc;
}

test("ldap - binding as the user's DN issues a token whose roles are the user's groups", async (t) => {
  const { sys } = t.context;
  const r = await requestToken(sys.tokenUrl!, "alice", "alicepw");
  t.is(r.status, 200, r.text);
  t.is(r.body.token_type, "Bearer");
  const token = r.body.access_token as string;
  // superadmin group -> superadmin role
  const tenants = await api(sys.baseUrl, "GET", "/tenants", { user: "alice", tenant: "superadmin", headers: bearer(token) });
  t.is(tenants.status, 200, tenants.text);
  const bob = await tokenFor(sys.tokenUrl!, "bob", "bobpw");
  t.is((await api(sys.baseUrl, "GET", "/tenants", { user: "bob", tenant: "superadmin", headers: bearer(bob) })).status, 401);
  t.is((await api(sys.baseUrl, "GET", "/providers", { user: "bob", tenant: "superadmin", headers: bearer(bob) })).status, 200);
});

test("ldap - wrong, empty and unknown credentials are 401", async (t) => {
  const url = t.context.sys.tokenUrl!;
  t.is((await requestToken(url, "alice", "wrong")).status, 401);
  t.is((await requestToken(url, "alice", "")).status, 401, "an empty password is not an anonymous bind");
  t.is((await requestToken(url, "mallory", "alicepw")).status, 401);
  t.is((await requestToken(url, "alice,ou=people", "alicepw")).status, 401, "DN injection");
  t.is((await requestToken(url, "*", "alicepw")).status, 401);
});

test("ldap - user names with DN special characters are escaped", async (t) => {
  t.is((await requestToken(t.context.sys.tokenUrl!, "o'neil, jr", "oneilpw")).status, 200);
});

test("ldap - with bindDn the user is searched by userIdAttribute, then bound", async (t) => {
  const { ldap } = t.context;
  const lines: string[] = [];
  const log = createLogger({}, { write: (line) => void lines.push(line) });
  const svc = await tokenServer(
    t,
    {
      ...directBind(ldap),
      "security.authentication.handlerClassName": "ldap",
      "security.authentication.handler.bindDn": ldap.adminDn,
      "security.authentication.handler.bindPassword": ldap.adminPassword,
      "security.authentication.handler.userIdAttribute": "cn",
      "security.authentication.handler.userPasswordAttribute": "userPassword",
      "security.authentication.handler.debug": true,
    },
    log,
  );
  // cn, not uid, is the login name now
  const r = await requestToken(svc.tokenUrl, "Alice Example", "alicepw");
  t.is(r.status, 200, r.text);
  t.is((await requestToken(svc.tokenUrl, "alice", "alicepw")).status, 401);
  t.is((await requestToken(svc.tokenUrl, "Alice Example", "nope")).status, 401);
  const claims = await verify(t.context.sys, r.body.access_token);
  t.deepEqual(claims.roles.sort(), ["devs", "superadmin"]);
  t.true(lines.some((l) => l.includes("ldap: user search")), "debug logs the steps");
  t.false(lines.some((l) => l.includes("alicepw") || l.includes(ldap.adminPassword)), "never a password");
});

test("ldap - without roleBaseDn users have no roles; userObjectClass is enforced", async (t) => {
  const { ldap } = t.context;
  const noRoles = await tokenServer(t, { ...directBind(ldap), "security.authentication.handler.roleBaseDn": "" });
  const r = await requestToken(noRoles.tokenUrl, "alice", "alicepw");
  t.is(r.status, 200, r.text);
  t.deepEqual((await verify(t.context.sys, r.body.access_token)).roles, []);
  const wrongClass = await tokenServer(t, { ...directBind(ldap), "security.authentication.handler.userObjectClass": "posixAccount" });
  t.is((await requestToken(wrongClass.tokenUrl, "alice", "alicepw")).status, 401);
});

test("ldap - an unreachable LDAP server is 503, not a failed login", async (t) => {
  const svc = await tokenServer(t, {
    ...directBind(t.context.ldap),
    "security.authentication.handler.port": await freePort(),
    "security.authentication.handler.timeoutMs": 1000,
  });
  const r = await requestToken(svc.tokenUrl, "alice", "alicepw");
  t.is(r.status, 503, r.text);
  t.is(r.body.error, "service_unavailable");
});

test("ldap - a missing required property fails the start, naming it", async (t) => {
  const err = await t.throwsAsync(tokenServer(t, { ...directBind(t.context.ldap), "security.authentication.handler.userBaseDn": "" }));
  t.regex(err?.message ?? "", /security\.authentication\.handler\.userBaseDn is required/);
});

async function verify(sys: TestSystem, token: string): Promise<VerifiedToken> {
  return callEndpoint(sys.nc, "auth.verify", { token });
}
