import test from "ava";
import { isSuperadmin, roleFromToken } from "../src/domain/roles.js";

test("roles - superadmin is the superadmin in tenant superadmin and a tenant admin elsewhere", (t) => {
  t.is(roleFromToken(["superadmin"], "superadmin"), "superadmin");
  t.is(roleFromToken(["SuperAdmin"], "acme"), "admin");
  t.true(isSuperadmin(["superadmin"]));
});

test("roles - admin administers any tenant but is not the superadmin", (t) => {
  t.is(roleFromToken(["admin"], "acme"), "admin");
  t.is(roleFromToken(["admin"], "superadmin"), "admin");
  t.false(isSuperadmin(["admin"]));
});

test("roles - admin:<tenant> is scoped to that tenant", (t) => {
  t.is(roleFromToken(["admin:acme"], "acme"), "admin");
  t.is(roleFromToken(["admin:acme"], "other"), "user");
  t.is(roleFromToken(["admin:acme"], "superadmin"), "user");
  t.is(roleFromToken(["admin:superadmin"], "superadmin"), "superadmin");
  t.true(isSuperadmin(["admin:superadmin"]));
});

test("roles - anything else, or nothing, is an ordinary user", (t) => {
  t.is(roleFromToken([], "acme"), "user");
  t.is(roleFromToken(["devs", "administrators"], "acme"), "user");
  t.is(roleFromToken(["devs"], "superadmin"), "user");
});
