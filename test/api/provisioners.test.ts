/**
 * Provisioners through the REST API (docs/api.md): the records provisioners write, joined with the worker
 * assignment tenancy's balancer writes, read by the superadmin. Only live provisioners are shown.
 */
import { PROVISIONER_DEAD_AFTER_MS, type Provisioner, type ProvisionerRecord } from "@corral/contracts";
import { api, SUPERADMIN } from "../helpers/api.js";
import { assertError, assertOk } from "../helpers/assertions.js";
import { createTenant, uniqueName } from "../helpers/catalog.js";
import { eventually } from "../helpers/eventually.js";
import { registerProvisioner, type ProvisionerInput } from "../helpers/registry.js";
import { type TestSystem } from "../helpers/system.js";
import { testWithSystem } from "../helpers/system-test.js";

const test = testWithSystem();

const provisioner = (id: string, overrides: Partial<ProvisionerRecord> = {}): ProvisionerInput => ({
  id,
  host: `${id}.example.com`,
  port: 55056,
  capacityTotal: 10,
  usage: { superadmin: 1, acme: 1 },
  ...overrides,
});

/** What GET answers for a record that has no workers assigned. */
const unassigned = (r: ProvisionerRecord): Provisioner => ({
  id: r.id,
  host: r.host,
  port: r.port,
  capacityTotal: r.capacityTotal,
  capacityFree: r.capacityTotal,
  assignments: {},
  usage: r.usage,
});

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const get = (t: { context: { sys: TestSystem } }, path: string) => api(t.context.sys.baseUrl, "GET", path, SUPERADMIN);
const su = (t: { context: { sys: TestSystem } }, method: string, path: string, body?: unknown) =>
  api(t.context.sys.baseUrl, method, path, { ...SUPERADMIN, body });

// Serial tests run before the concurrent ones: the registry is still empty here.
test.serial("provisioners - the list is an empty array before any provisioner registers", async (t) => {
  const res = await get(t, "/provisioners");
  assertOk(t, res, "list");
  t.deepEqual(res.body, []);
});

// Serial too: tenant workers go to every live provisioner, so the concurrent tests' provisioners must not exist yet
// (and this test leaves none of its workers behind).
test.serial("provisioners - assignments and capacityFree show the workers the balancer placed", async (t) => {
  const suffix = uniqueName("placed");
  const { nc } = t.context.sys;
  const big = await registerProvisioner(nc, provisioner(`a-${suffix}`, { capacityTotal: 3, usage: {} }));
  const small = await registerProvisioner(nc, provisioner(`b-${suffix}`, { capacityTotal: 2, usage: {} }));
  t.teardown(() => {
    big.stop();
    small.stop();
  });
  const tenant = await createTenant(t.context.sys.baseUrl, "placed", { tenant: { workers: 4 } });

  const placed = await eventually(
    async () => {
      const list = (await get(t, "/provisioners")).body as Provisioner[];
      const assigned = list.reduce((sum, p) => sum + (p.assignments[tenant.name] ?? 0), 0);
      return assigned === 4 ? list : false;
    },
    { what: "4 workers of the tenant to be placed", timeoutMs: 10_000 },
  );
  t.deepEqual(
    placed.map((p) => p.id),
    [big.record.id, small.record.id],
  );
  for (const p of placed) {
    const n = p.assignments[tenant.name] ?? 0;
    t.true(n >= 1, `${p.id} holds some of the tenant's workers (spread)`);
    t.deepEqual(p.assignments, { [tenant.name]: n }, `${p.id} assignments`);
    t.is(p.capacityFree, p.capacityTotal - n, `${p.id} capacityFree`);
    t.deepEqual((await get(t, `/provisioners/${p.id}`)).body, p, `get ${p.id} agrees with the list`);
  }

  // Workers back to 0: the assignments empty again, so the tenant can be deleted.
  const lowered = await su(t, "PUT", `/tenants/${tenant.name}`, { tenant: { name: tenant.name, workers: 0 } });
  assertOk(t, lowered, "workers 0");
  await eventually(
    async () => {
      const list = (await get(t, "/provisioners")).body as Provisioner[];
      return list.every((p) => Object.keys(p.assignments).length === 0 && p.capacityFree === p.capacityTotal);
    },
    { what: "the assignments to empty", timeoutMs: 10_000 },
  );
  assertOk(t, await su(t, "DELETE", `/tenants/${tenant.name}`), "delete");
});

test("provisioners - the list is sorted by id and get returns each one", async (t) => {
  const suffix = uniqueName("sorted");
  const ids = [`c-${suffix}`, `A-${suffix}`, `b-${suffix}`, `a-${suffix}`, `10-${suffix}`];
  const records: ProvisionerRecord[] = [];
  for (const [i, id] of ids.entries()) {
    const input = provisioner(id, { port: 56000 + i, capacityTotal: i });
    const registered = await registerProvisioner(t.context.sys.nc, input);
    t.teardown(() => registered.stop());
    records.push(registered.record);
  }

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
  t.deepEqual(mine, records.map(unassigned).sort(byId), "provisioner objects in id order");
  for (const p of mine) {
    t.deepEqual(Object.keys(p), ["id", "host", "port", "capacityTotal", "capacityFree", "assignments", "usage"]);
  }

  for (const r of records) {
    const one = await get(t, `/provisioners/${encodeURIComponent(r.id)}`);
    assertOk(t, one, `get ${r.id}`);
    t.deepEqual(one.body, unassigned(r));
  }
});

test("provisioners - ids with dots and colons are found", async (t) => {
  const id = `${uniqueName("host")}.example.com:55056`;
  const registered = await registerProvisioner(t.context.sys.nc, provisioner(id, { usage: {} }));
  t.teardown(() => registered.stop());
  const res = await get(t, `/provisioners/${encodeURIComponent(id)}`);
  assertOk(t, res, "get");
  t.deepEqual(res.body, unassigned(registered.record));
});

test("provisioners - get of an unknown id is 404", async (t) => {
  assertError(t, await get(t, `/provisioners/${uniqueName("nobody")}`), 404, "unknown provisioner");
});

test("provisioners - a provisioner whose heartbeat is too old is 404 and not listed", async (t) => {
  const id = uniqueName("silent");
  const lastHeartbeat = Date.now() - PROVISIONER_DEAD_AFTER_MS - 1000;
  await registerProvisioner(t.context.sys.nc, provisioner(id, { lastHeartbeat }), { heartbeat: false });
  assertError(t, await get(t, `/provisioners/${id}`), 404, "dead provisioner");
  const listed = (await get(t, "/provisioners")).body as Provisioner[];
  t.false(
    listed.some((p) => p.id === id),
    "not listed",
  );

  // It heartbeats again: back.
  const back = await registerProvisioner(t.context.sys.nc, provisioner(id));
  t.teardown(() => back.stop());
  t.deepEqual((await get(t, `/provisioners/${id}`)).body, unassigned(back.record));
});

test("provisioners - a provisioner that registers again shows its new state", async (t) => {
  const id = uniqueName("again");
  await registerProvisioner(t.context.sys.nc, provisioner(id));
  const updated = await registerProvisioner(
    t.context.sys.nc,
    provisioner(id, { capacityTotal: 4, host: "elsewhere.example.com", usage: { superadmin: 1, acme: 2 } }),
  );
  t.teardown(() => updated.stop());
  const expected = unassigned(updated.record);
  t.deepEqual((await get(t, `/provisioners/${id}`)).body, expected);
  const listed = (await get(t, "/provisioners")).body as Provisioner[];
  t.deepEqual(
    listed.filter((p) => p.id === id),
    [expected],
    "listed once, new state",
  );
});

test("provisioners - tenant admins and ordinary users get 401", async (t) => {
  const base = t.context.sys.baseUrl;
  const id = uniqueName("secret");
  const registered = await registerProvisioner(t.context.sys.nc, provisioner(id));
  t.teardown(() => registered.stop());
  const tenant = await createTenant(base, "prov");
  for (const caller of [tenant.admin, tenant.user, { user: "someone", tenant: "superadmin" }]) {
    for (const path of ["/provisioners", `/provisioners/${id}`]) {
      assertError(t, await api(base, "GET", path, caller), 401, `${caller.user}@${caller.tenant} GET ${path}`);
    }
  }
});
