import { api, SUPERADMIN } from "../helpers/api.js";
import { testWithSystem } from "../helpers/system-test.js";

const test = testWithSystem();

test("status - answers at /status and /v2/status without identity", async (t) => {
  const a = await api(t.context.sys.baseUrl, "GET", "/status");
  t.is(a.status, 200);
  const b = await api(t.context.sys.baseUrl.replace(/\/v2$/, ""), "GET", "/status");
  t.is(b.status, 200);
});

test("tenants - the superadmin tenant exists from the first start", async (t) => {
  const r = await api(t.context.sys.baseUrl, "GET", "/tenants/superadmin", SUPERADMIN);
  t.is(r.status, 200);
  t.is(r.body.name, "superadmin");
});
