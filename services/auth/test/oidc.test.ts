import test from "ava";
import { loadConfig } from "@corral/shared";
import { looksLikeJwt } from "../src/oidc/bearer.js";
import { claimAt, identityFromClaims } from "../src/oidc/claims.js";
import { readOidcSettings, signInDetails, type ClaimMapping } from "../src/oidc/settings.js";

const MAPPING: ClaimMapping = {
  userClaim: "preferred_username",
  tenantClaim: "tenant",
  defaultTenant: "",
  roleClaim: "groups",
  adminRole: "corral-admin",
  superadminRole: "",
};

const oidc = (overrides: Record<string, string | boolean | number> = {}) =>
  readOidcSettings(loadConfig({ overrides: { "security.oidc.issuer": "https://id.example.com/realms/corral", "security.oidc.clientId": "corral", ...overrides } }));

test("oidc claims - user, tenant and role from the configured claims", (t) => {
  t.deepEqual(identityFromClaims({ sub: "1", preferred_username: "alice", tenant: "acme", groups: ["devs"] }, MAPPING), {
    ok: true,
    identity: { userId: "alice", tenant: "acme", roles: [] },
  });
  t.deepEqual(identityFromClaims({ preferred_username: "ada", tenant: "acme", groups: ["corral-admin"] }, MAPPING), {
    ok: true,
    identity: { userId: "ada", tenant: "acme", roles: ["admin"] },
  });
  t.like(identityFromClaims({ preferred_username: "ada", tenant: "acme", groups: "corral-admin" }, MAPPING), { ok: true, identity: { roles: ["admin"] } }, "a string claim is one value");
});

test("oidc claims - the provider's group names never give Corral's roles; only the configured values do", (t) => {
  const sam = { preferred_username: "sam", tenant: "superadmin", groups: ["superadmin", "admin", "admin:superadmin"] };
  t.like(identityFromClaims(sam, MAPPING), { ok: true, identity: { roles: [] } });
  t.like(identityFromClaims(sam, { ...MAPPING, superadminRole: "superadmin" }), { ok: true, identity: { roles: ["superadmin"] } });
  t.like(
    identityFromClaims({ ...sam, tenant: "acme" }, { ...MAPPING, superadminRole: "superadmin" }),
    { ok: true, identity: { roles: [] } },
    "the superadmin value counts only in tenant superadmin",
  );
});

test("oidc claims - no user, no tenant or an invalid tenant is refused with the reason", (t) => {
  t.like(identityFromClaims({ tenant: "acme" }, MAPPING), { ok: false, reason: "the token has no preferred_username claim naming the user" });
  t.like(identityFromClaims({ preferred_username: "x".repeat(256), tenant: "acme" }, MAPPING), { ok: false });
  t.like(identityFromClaims({ preferred_username: "alice" }, MAPPING), { ok: false });
  t.deepEqual(identityFromClaims({ preferred_username: "alice" }, { ...MAPPING, defaultTenant: "acme" }), { ok: true, identity: { userId: "alice", tenant: "acme", roles: [] } });
  t.like(identityFromClaims({ preferred_username: "alice", tenant: "../etc" }, MAPPING), { ok: false });
  t.like(identityFromClaims({ preferred_username: "alice", tenant: ["acme"] }, MAPPING), { ok: false });
});

test("oidc claims - a dotted name reaches into objects unless a claim has that very name", (t) => {
  const claims = { realm_access: { roles: ["corral-admin"] }, "https://corral.example/tenant": "acme" };
  t.deepEqual(claimAt(claims, "realm_access.roles"), ["corral-admin"]);
  t.is(claimAt(claims, "https://corral.example/tenant"), "acme");
  t.is(claimAt(claims, "realm_access.missing"), undefined);
  t.is(claimAt({ a: "text" }, "a.length"), undefined, "no walking into strings");
  t.is(claimAt({}, "__proto__.polluted"), undefined);
});

test("oidc settings - none without an issuer; checked with one", (t) => {
  t.is(readOidcSettings(loadConfig()), undefined);
  const s = oidc();
  t.is(s?.issuer.href, "https://id.example.com/realms/corral");
  t.is(s?.audience, "corral", "the client id by default");
  t.false(s?.acceptBearer);
  t.is(s?.jwksCooldownMs, 30_000);
  t.is(oidc({ "security.oidc.bearer.audience": "corral-api" })?.audience, "corral-api");
  t.throws(() => oidc({ "security.oidc.clientId": "" }), { message: /clientId is required/ });
  t.throws(() => oidc({ "security.oidc.issuer": "http://id.example.com" }), { message: /https/ }, "plain HTTP only on loopback");
  t.is(oidc({ "security.oidc.issuer": "http://127.0.0.1:8080" })?.issuer.host, "127.0.0.1:8080");
  t.throws(() => oidc({ "security.oidc.scopes": "profile" }), { message: /openid/ });
  t.throws(() => oidc({ "security.oidc.tenantClaim": "" }), { message: /every token needs a tenant/ });
});

test("oidc settings - a browser signs in beside the callback, else on the token server", (t) => {
  t.deepEqual(signInDetails(oidc()!, "http://localhost:55059/token"), { provider: "SSO", url: "http://localhost:55059/oidc/login" });
  const proxied = oidc({ "security.oidc.redirectUri": "https://corral.example.com/auth/oidc/callback", "security.oidc.providerName": "Keycloak" })!;
  t.deepEqual(signInDetails(proxied, "http://localhost:55059/token"), { provider: "Keycloak", url: "https://corral.example.com/auth/oidc/login" });
});

test("oidc bearer - JWTs are told from Corral's own tokens by their shape", (t) => {
  t.true(looksLikeJwt("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln"));
  t.false(looksLikeJwt("AQJrMXsic3ViIjoiYWxpY2UifQ"));
  t.false(looksLikeJwt("a.b"));
});
