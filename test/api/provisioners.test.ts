/** Provisioners through the REST API (spec 2.2, 4.2): the registry provisioners write, read by the superadmin. */
import anyTest, { type TestFn } from "ava";
import type { Provisioner } from "@corral/shared";
import { api, SUPERADMIN } from "../helpers/api.js";
import { assertError, assertOk } from "../helpers/assertions.js";
import { createTenant, uniqueName } from "../helpers/catalog.js";
import { registerProvisioner } from "../helpers/registry.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

const test = anyTest as TestFn<{ sys: TestSystem }>;
test.before(async (t) => {
  t.context.sys = await startSystem();
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
});

const provisioner = (id: string, overrides: Partial<Provisioner> = {}): Provisioner => ({
  id,
  host: `${id}.example.com`,
  port: 55056,
  capacityTotal: 10,
  capacityFree: 7,
  assignments: { superadmin: 1, acme: 2 },
  usage: { superadmin: 1, acme: 1 },
  ...overrides,
});

const get = (t: { context: { sys: TestSystem } }, path: string) => api(t.context.sys.baseUrl, "GET", path, SUPERADMIN);

// Serial tests run before the concurrent ones: the registry is still empty here.
test.serial("provisioners - the list is an empty array before any provisioner registers", async (t) => {
  const res = await get(t, "/provisioners");
  assertOk(t, res, "list");
  t.deepEqual(res.body, []);
});

test("provisioners - the list is sorted by id and get returns each one", async (t) => {
  const suffix = uniqueName("sorted");
  const ids = [`c-${suffix}`, `A-${suffix}`, `b-${suffix}`, `a-${suffix}`, `10-${suffix}`];
  const records = ids.map((id, i) => provisioner(id, { port: 56000 + i, capacityFree: i }));
  for (const p of records) await registerProvisioner(t.context.sys.nc, p);

  const res = await get(t, "/provisioners");
  assertOk(t, res, "list");
  const list = res.body as Provisioner[];
  const listedIds = list.map((p) => p.id);
  t.deepEqual(
    listedIds,
    [...listedIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    "sorted by id",
  );
  const mine = list.filter((p) => p.id.endsWith(suffix));
  const expected = [...records].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  t.deepEqual(mine, expected, "full records in id order");

  for (const p of records) {
    const one = await get(t, `/provisioners/${encodeURIComponent(p.id)}`);
    assertOk(t, one, `get ${p.id}`);
    t.deepEqual(one.body, p);
  }
});

test("provisioners - ids with dots and colons are found", async (t) => {
  const id = `${uniqueName("host")}.example.com:55056`;
  const p = provisioner(id, { assignments: {}, usage: {} });
  await registerProvisioner(t.context.sys.nc, p);
  const res = await get(t, `/provisioners/${encodeURIComponent(id)}`);
  assertOk(t, res, "get");
  t.deepEqual(res.body, p);
});

test("provisioners - get of an unknown id is 404", async (t) => {
  assertError(t, await get(t, `/provisioners/${uniqueName("nobody")}`), 404, "unknown provisioner");
});

test("provisioners - a provisioner that registers again shows its new state", async (t) => {
  const id = uniqueName("again");
  await registerProvisioner(t.context.sys.nc, provisioner(id));
  const updated = provisioner(id, { capacityFree: 0, usage: { superadmin: 1, acme: 2 } });
  await registerProvisioner(t.context.sys.nc, updated);
  t.deepEqual((await get(t, `/provisioners/${id}`)).body, updated);
  const listed = (await get(t, "/provisioners")).body as Provisioner[];
  t.deepEqual(
    listed.filter((p) => p.id === id),
    [updated],
    "listed once, new state",
  );
});

test("provisioners - tenant admins and ordinary users get 401", async (t) => {
  const base = t.context.sys.baseUrl;
  const id = uniqueName("secret");
  await registerProvisioner(t.context.sys.nc, provisioner(id));
  const tenant = await createTenant(base, "prov");
  for (const caller of [tenant.admin, tenant.user, { user: "someone", tenant: "superadmin" }]) {
    for (const path of ["/provisioners", `/provisioners/${id}`]) {
      assertError(t, await api(base, "GET", path, caller), 401, `${caller.user}@${caller.tenant} GET ${path}`);
    }
  }
});
