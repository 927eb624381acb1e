/** Who sees which node usage (services/metrics/README.md, Access): the pure decision, every branch. */
import test from "ava";
import type { CorralError, Identity } from "@corral/contracts";
import { resolveUsageQuery } from "@corral/metrics/testing";

const superadmin: Identity = { userId: "admin", tenant: "superadmin", role: "superadmin" };
const admin: Identity = { userId: "admin", tenant: "acme", role: "admin" };
const bob: Identity = { userId: "bob", tenant: "acme", role: "user" };
const NOW = 1_700_000_000;

const statusOf = (fn: () => unknown) => {
  try {
    fn();
    return 200;
  } catch (err) {
    return (err as CorralError).status;
  }
};

test("usage query - the superadmin scopes by tenant, user, both or nothing", (t) => {
  t.deepEqual(resolveUsageQuery(superadmin, {}, NOW), { scope: { kind: "all" }, end: NOW });
  t.deepEqual(resolveUsageQuery(superadmin, { tenant: "acme" }, NOW).scope, { kind: "tenant", tenant: "acme" });
  t.deepEqual(resolveUsageQuery(superadmin, { user: "bob" }, NOW).scope, { kind: "user", user: "bob" });
  t.deepEqual(resolveUsageQuery(superadmin, { tenant: "acme", user: "bob" }, NOW).scope, {
    kind: "tenantUser",
    tenant: "acme",
    user: "bob",
  });
});

test("usage query - a tenant admin sees its tenant, or one user name within it", (t) => {
  t.deepEqual(resolveUsageQuery(admin, {}, NOW).scope, { kind: "tenant", tenant: "acme" });
  t.deepEqual(resolveUsageQuery(admin, { user: "carol" }, NOW).scope, { kind: "tenantUser", tenant: "acme", user: "carol" });
});

test("usage query - an ordinary user sees only its own usage", (t) => {
  const own = { kind: "tenantUser", tenant: "acme", user: "bob" };
  t.deepEqual(resolveUsageQuery(bob, {}, NOW).scope, own);
  t.deepEqual(resolveUsageQuery(bob, { user: "bob" }, NOW).scope, own);
  t.is(statusOf(() => resolveUsageQuery(bob, { user: "carol" }, NOW)), 403);
});

test("usage query - a tenant parameter from anyone but the superadmin is a 405, even the caller's own tenant", (t) => {
  t.is(statusOf(() => resolveUsageQuery(admin, { tenant: "other" }, NOW)), 405);
  t.is(statusOf(() => resolveUsageQuery(admin, { tenant: "acme" }, NOW)), 405);
  t.is(statusOf(() => resolveUsageQuery(bob, { tenant: "acme", user: "carol" }, NOW)), 405);
  t.is(statusOf(() => resolveUsageQuery({ userId: "bob", tenant: "superadmin", role: "user" }, { tenant: "acme" }, NOW)), 405);
});

test("usage query - start and end are whole Unix seconds, end not before start; end defaults to now", (t) => {
  t.deepEqual(resolveUsageQuery(admin, { start: "5", end: "22" }, NOW), {
    scope: { kind: "tenant", tenant: "acme" },
    start: 5,
    end: 22,
  });
  t.deepEqual(resolveUsageQuery(admin, { start: "7" }, NOW), { scope: { kind: "tenant", tenant: "acme" }, start: 7, end: NOW });
  t.deepEqual(resolveUsageQuery(admin, { start: "9", end: "9" }, NOW).end, 9);
  for (const bad of ["", "-1", "1.5", "1e3", "abc", " 5", "0x10", "99999999999999"]) {
    t.is(statusOf(() => resolveUsageQuery(admin, { start: bad }, NOW)), 400, `start=${JSON.stringify(bad)}`);
    t.is(statusOf(() => resolveUsageQuery(admin, { end: bad }, NOW)), 400, `end=${JSON.stringify(bad)}`);
  }
  t.is(statusOf(() => resolveUsageQuery(admin, { start: "10", end: "9" }, NOW)), 400);
  t.is(statusOf(() => resolveUsageQuery(admin, { start: String(NOW + 1) }, NOW)), 400, "start after the default end");
  t.is(statusOf(() => resolveUsageQuery(admin, { user: "" }, NOW)), 400);
  t.is(statusOf(() => resolveUsageQuery(superadmin, { tenant: "" }, NOW)), 400);
});
