import test from "ava";
import { bindingProblem, tenantUidOf } from "../src/domain/tenant-binding.js";
import { checkSignature, newSecret, signToken, tokenKeyId, verifyToken, type TokenClaims } from "../src/domain/token.js";

const key = { id: "k1", secret: newSecret() };
const claims: TokenClaims = { userId: "alice", roles: ["admin", "devs"], issuedAtMs: 1_000, expiresAtMs: 61_000, tokenId: "t1" };
const keyFor = (id: string) => (id === key.id ? key.secret : undefined);

test("token - a signed token verifies and round-trips its claims", (t) => {
  const token = signToken(claims, key);
  t.regex(token, /^[A-Za-z0-9_-]+$/);
  t.is(tokenKeyId(token), "k1");
  const check = verifyToken(token, keyFor, 2_000);
  t.true(check.ok);
  if (check.ok) t.deepEqual(check.claims, claims);
});

test("token - standard base64 spelling of the same bytes is accepted", (t) => {
  const token = signToken(claims, key);
  const standard = Buffer.from(token, "base64url").toString("base64");
  t.true(verifyToken(standard, keyFor, 2_000).ok);
});

test("token - expiry is exclusive of the expiry instant", (t) => {
  const token = signToken(claims, key);
  t.true(verifyToken(token, keyFor, 60_999).ok);
  t.deepEqual(verifyToken(token, keyFor, 61_000), { ok: false, reason: "the token has expired", keyId: "k1" });
});

test("token - a tampered token, another key, an unknown key id and garbage are refused", (t) => {
  const token = signToken(claims, key);
  const bytes = Buffer.from(token, "base64url");
  for (const i of [3, 10, bytes.length - 1]) {
    const copy = Buffer.from(bytes);
    copy[i] = copy[i]! ^ 0x01;
    t.false(checkSignature(copy.toString("base64url"), keyFor).ok, `byte ${i}`);
  }
  const other = signToken(claims, { id: "k1", secret: newSecret() });
  t.like(checkSignature(other, keyFor), { ok: false, reason: "the token signature is invalid" });
  const unknown = signToken(claims, { id: "k9", secret: key.secret });
  t.like(checkSignature(unknown, keyFor), { ok: false, reason: "the token was signed with an unknown key" });
  for (const junk of ["", "abc", "!!!!", "a".repeat(5000), Buffer.from([1, 2, 107, 49]).toString("base64url")]) {
    t.like(checkSignature(junk, keyFor), { ok: false, reason: "the token is malformed" }, JSON.stringify(junk.slice(0, 10)));
  }
});

test("token - claims with the wrong shape are refused even when signed", (t) => {
  // Sign a body whose JSON lacks `sub`: build it by hand the way signToken does.
  const token = signToken({ ...claims, userId: "" }, key);
  t.like(checkSignature(token, keyFor), { ok: false, reason: "the token is malformed" });
});

test("token - a tenant binding round-trips; a token signed without one has none", (t) => {
  const bound = { ...claims, tenant: { name: "acme", uid: "u-1" } };
  const check = verifyToken(signToken(bound, key), keyFor, 2_000);
  t.true(check.ok);
  if (check.ok) t.deepEqual(check.claims, bound);
  const legacy = verifyToken(signToken(claims, key), keyFor, 2_000);
  t.true(legacy.ok);
  if (legacy.ok) t.false("tenant" in legacy.claims);
});

test("token - a tenant binding without a name is refused even when signed", (t) => {
  const token = signToken({ ...claims, tenant: { name: "", uid: "u-1" } }, key);
  t.like(checkSignature(token, keyFor), { ok: false, reason: "the token is malformed" });
});

test("token - a bound token may act only in its tenant, and only while the tenant keeps its uid", (t) => {
  const binding = { name: "acme", uid: "u-1" };
  t.is(bindingProblem(binding, "acme", "u-1"), undefined);
  t.regex(bindingProblem(binding, "beta", "u-1") ?? "", /issued for tenant acme, not for Service-TenantID beta/);
  t.regex(bindingProblem(binding, "acme", "u-2") ?? "", /issued for a tenant that no longer exists/);
  t.regex(bindingProblem(binding, "acme", undefined) ?? "", /issued for a tenant that no longer exists/);
  // A record written before uids existed binds by name ("") until the tenant is created again.
  t.is(bindingProblem({ name: "old", uid: tenantUidOf({ tenant: { name: "old", workers: 0 } }) }, "old", ""), undefined);
  t.truthy(bindingProblem({ name: "old", uid: "" }, "old", "u-3"));
});

test("token - an identity provider's token is bound by name: any tenant of that name, none while there is none", (t) => {
  const byName = { name: "acme" };
  t.is(bindingProblem(byName, "acme", "u-1"), undefined);
  t.is(bindingProblem(byName, "acme", "u-2"), undefined, "a tenant created again under the name");
  t.regex(bindingProblem(byName, "acme", undefined) ?? "", /tenant acme, named by the identity provider's tenant claim, does not exist/);
  t.regex(bindingProblem(byName, "beta", "u-1") ?? "", /issued for tenant acme, not for Service-TenantID beta/);
  t.throws(() => signToken({ ...claims, tenant: byName }, key), { message: /binds its tenant by uid/ });
});
