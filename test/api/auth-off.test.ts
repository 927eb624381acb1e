import { api } from "../helpers/api.js";
import { testWithSystem } from "../helpers/system-test.js";

/** security.enabled=false (the default): no tokens anywhere, the identity headers alone decide. */
const test = testWithSystem();

test("security off - /status answers without a token, and an Authorization header is ignored", async (t) => {
  const { sys } = t.context;
  t.is((await api(sys.baseUrl, "GET", "/status")).status, 200);
  t.is((await api(sys.baseUrl, "GET", "/status", { headers: { authorization: "Bearer garbage" } })).status, 200);
  t.is(sys.auth, undefined);
  t.is(sys.redis, undefined);
});

test("security off - user admin is the admin by name, as before", async (t) => {
  const { sys } = t.context;
  const headers = { authorization: "Bearer garbage" };
  t.is((await api(sys.baseUrl, "GET", "/tenants", { user: "admin", tenant: "superadmin", headers })).status, 200);
  t.is((await api(sys.baseUrl, "GET", "/tenants", { user: "alice", tenant: "superadmin" })).status, 401);
  t.is((await api(sys.baseUrl, "GET", "/providers", { tenant: "superadmin" })).status, 401, "headers still required");
});
