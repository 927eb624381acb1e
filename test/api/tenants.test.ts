/**
 * Tenants through the REST API (docs/api.md): validation, quotas, deletion rules,
 * superadmin-only access, bootstrap.
 */
import anyTest, { type TestFn } from "ava";
import { api, SUPERADMIN, type Caller } from "../helpers/api.js";
import { assertError, assertOk, show } from "../helpers/assertions.js";
import { createTenant, emptyCatalog, exportCatalog, KINDS, sample, setUsage, uniqueName } from "../helpers/catalog.js";
import { eventually } from "../helpers/eventually.js";
import { registerFixturePluginTypes } from "../helpers/registry.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

const test = anyTest as TestFn<{ sys: TestSystem }>;

test.before(async (t) => {
  // A deleted name is free again once every service that keeps tenant state purged it: clusters and metrics too.
  t.context.sys = await startSystem({ clusters: 1, metrics: 1, webhooks: 1 });
  await registerFixturePluginTypes(t.context.sys.nc);
  // The superadmin catalog that bootstrap copies; tests only read it.
  for (const kind of KINDS) {
    for (const name of [`seed-b-${kind}`, `seed-a-${kind}`]) {
      const res = await api(t.context.sys.baseUrl, "POST", `/${kind}`, { ...SUPERADMIN, body: sample[kind](name) });
      if (res.status !== 200) throw new Error(`seeding ${kind} ${name}: ${show(res)}`);
    }
  }
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
});

const as = (t: { context: { sys: TestSystem } }, caller: Caller) => (method: string, path: string, body?: unknown) =>
  api(t.context.sys.baseUrl, method, path, { ...caller, body });

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

// -------------------------------------------------------------------------------------------------------------
// create and read

test("tenants - create answers 200 with the stored tenant and get returns it", async (t) => {
  const su = as(t, SUPERADMIN);
  const name = uniqueName("create");
  const tenant = { name, description: "a test tenant", workers: 2, maxClusters: 3, maxNodes: 10 };
  const created = await su("POST", "/tenants", { tenant });
  assertOk(t, created, "create");
  t.deepEqual(created.body, tenant);
  const got = await su("GET", `/tenants/${name}`);
  assertOk(t, got, "get");
  t.deepEqual(got.body, tenant);
});

test("tenants - the optional fields may be left out", async (t) => {
  const su = as(t, SUPERADMIN);
  const name = uniqueName("minimal");
  const created = await su("POST", "/tenants", { tenant: { name, workers: 0 } });
  assertOk(t, created, "create");
  t.deepEqual(created.body, { name, workers: 0 });
  t.deepEqual((await su("GET", `/tenants/${name}`)).body, { name, workers: 0 });
});

test("tenants - extra key-value settings are kept and returned", async (t) => {
  const su = as(t, SUPERADMIN);
  const name = uniqueName("extras");
  const extras = {
    region: "eu-west",
    limits: { cpu: 4, tags: ["a", "b"], nested: { deep: [1, { x: "y" }] } },
    enabled: true,
    ratio: 1.5,
    big: 5_000_000_000,
    nothing: null,
    "with.dot": "x",
    empty: {},
  };
  const tenant = { name, workers: 1, ...extras };
  const created = await su("POST", "/tenants", { tenant });
  assertOk(t, created, "create");
  t.deepEqual(created.body, tenant);
  t.deepEqual((await su("GET", `/tenants/${name}`)).body, tenant);
  const listed = (await su("GET", "/tenants")).body as Array<{ name: string }>;
  t.deepEqual(
    listed.find((x) => x.name === name),
    tenant,
  );

  // A PUT is a complete object: settings not given again are gone, new ones are kept.
  const replaced = { name, workers: 1, region: "us-east", other: [true, false] };
  const put = await su("PUT", `/tenants/${name}`, { tenant: replaced });
  assertOk(t, put, "put");
  t.deepEqual(put.body, replaced);
  t.deepEqual((await su("GET", `/tenants/${name}`)).body, replaced);
});

test("tenants - a setting whose key is __proto__ is refused with 400 and creates nothing", async (t) => {
  const su = as(t, SUPERADMIN);
  const name = uniqueName("proto");
  // msgpack decoders rename `__proto__` keys, so such a key could never be read back: refuse it up front.
  const raw = `{"tenant":{"name":"${name}","workers":0,"__proto__":{"x":1},"constructor":"c"}}`;
  const created = await api(t.context.sys.baseUrl, "POST", "/tenants", { ...SUPERADMIN, rawBody: raw });
  t.is(created.status, 400);
  t.regex(created.body.message, /__proto__/);
  t.is((await su("GET", `/tenants/${name}`)).status, 404);
});

test("tenants - names breaking the NAME rule are 400 and create nothing", async (t) => {
  const su = as(t, SUPERADMIN);
  const bad: unknown[] = [
    "",
    "bad name",
    "a/b",
    "ümlaut",
    "a*",
    "a>b",
    "tab\there",
    "x".repeat(256),
    "a,b",
    5,
    null,
    true,
    [],
    {},
  ];
  for (const name of bad) {
    const res = await su("POST", "/tenants", { tenant: { name, workers: 0 } });
    assertError(t, res, 400, `name ${JSON.stringify(name)}`);
  }
  const missing = await su("POST", "/tenants", { tenant: { workers: 0 } });
  assertError(t, missing, 400, "missing name");
  const names = ((await su("GET", "/tenants")).body as Array<{ name: unknown }>).map((x) => x.name);
  for (const name of bad) t.false(names.includes(name as string), `${JSON.stringify(name)} not created`);
});

test("tenants - a 255-character name of letters, digits, dots, dashes and underscores is accepted", async (t) => {
  const su = as(t, SUPERADMIN);
  const prefix = `${uniqueName("Ab9")}._-.`;
  const name = prefix + "z".repeat(255 - prefix.length);
  t.is(name.length, 255);
  const created = await su("POST", "/tenants", { tenant: { name, workers: 0 } });
  assertOk(t, created, "create");
  const got = await su("GET", `/tenants/${name}`);
  assertOk(t, got, "get");
  t.is(got.body.name, name);
});

test("tenants - missing, negative or non-integer workers are 400", async (t) => {
  const su = as(t, SUPERADMIN);
  const name = uniqueName("workers");
  const bad: Array<[string, unknown]> = [
    ["missing", undefined],
    ["null", null],
    ["negative", -1],
    ["negative string", "-1"],
    ["fraction", 1.5],
    ["fraction string", "1.5"],
    ["word", "abc"],
    ["empty string", ""],
    ["boolean", true],
    ["array", [1]],
    ["object", { n: 1 }],
    ["beyond 2^53", 1e20],
  ];
  for (const [what, workers] of bad) {
    const tenant: Record<string, unknown> = { name };
    if (workers !== undefined) tenant["workers"] = workers;
    assertError(t, await su("POST", "/tenants", { tenant }), 400, `workers ${what}`);
  }
  assertError(t, await su("GET", `/tenants/${name}`), 404, "nothing created");
});

test("tenants - numeric strings for workers and quotas are stored as integers", async (t) => {
  const su = as(t, SUPERADMIN);
  const name = uniqueName("strings");
  const created = await su("POST", "/tenants", { tenant: { name, workers: "3", maxClusters: "4", maxNodes: "0" } });
  assertOk(t, created, "create");
  const expected = { name, workers: 3, maxClusters: 4, maxNodes: 0 };
  t.deepEqual(created.body, expected);
  t.deepEqual((await su("GET", `/tenants/${name}`)).body, expected);
});

test("tenants - invalid quotas are 400", async (t) => {
  const su = as(t, SUPERADMIN);
  const name = uniqueName("quota");
  for (const key of ["maxClusters", "maxNodes"]) {
    for (const value of [-1, "-2", 1.5, "x", true, [], {}]) {
      const res = await su("POST", "/tenants", { tenant: { name, workers: 0, [key]: value } });
      assertError(t, res, 400, `${key} ${JSON.stringify(value)}`);
    }
  }
  assertError(t, await su("GET", `/tenants/${name}`), 404, "nothing created");
});

test("tenants - a body without the tenant wrapper or with a bad bootstrap flag is 400", async (t) => {
  const su = as(t, SUPERADMIN);
  const name = uniqueName("wrapper");
  const bodies: unknown[] = [
    { name, workers: 0 },
    { tenant: name },
    { tenant: [] },
    { tenant: null },
    { tenant: { name, workers: 0 }, bootstrap: "maybe" },
    { tenant: { name, workers: 0 }, bootstrap: 1 },
  ];
  for (const body of bodies) assertError(t, await su("POST", "/tenants", body), 400, JSON.stringify(body));
  assertError(t, await su("GET", `/tenants/${name}`), 404, "nothing created");
});

test("tenants - creating an existing name is 409 and keeps the first", async (t) => {
  const su = as(t, SUPERADMIN);
  const name = uniqueName("dup");
  const first = { name, workers: 1, description: "first" };
  assertOk(t, await su("POST", "/tenants", { tenant: first }), "first create");
  const again = await su("POST", "/tenants", { tenant: { name, workers: 5, description: "second" } });
  assertError(t, again, 409, "second create");
  t.deepEqual((await su("GET", `/tenants/${name}`)).body, first);
});

test("tenants - creating a tenant called superadmin is 409", async (t) => {
  const su = as(t, SUPERADMIN);
  const before = (await su("GET", "/tenants/superadmin")).body;
  assertError(
    t,
    await su("POST", "/tenants", { tenant: { name: "superadmin", workers: 9 } }),
    409,
    "create superadmin",
  );
  t.deepEqual((await su("GET", "/tenants/superadmin")).body, before);
});

test("tenants - GET of an unknown tenant is 404", async (t) => {
  assertError(t, await as(t, SUPERADMIN)("GET", `/tenants/${uniqueName("nobody")}`), 404, "get unknown");
});

// -------------------------------------------------------------------------------------------------------------
// update

test("tenants - PUT replaces the tenant and answers the stored object", async (t) => {
  const su = as(t, SUPERADMIN);
  const { name } = await createTenant(t.context.sys.baseUrl, "put", { tenant: { description: "old", maxNodes: 4 } });
  const put = await su("PUT", `/tenants/${name}`, { tenant: { name, workers: "5", maxClusters: 2 } });
  assertOk(t, put, "put");
  const expected = { name, workers: 5, maxClusters: 2 };
  t.deepEqual(put.body, expected);
  t.deepEqual((await su("GET", `/tenants/${name}`)).body, expected);
});

test("tenants - PUT with a name different from the path is 400 and changes nothing", async (t) => {
  const su = as(t, SUPERADMIN);
  const { name } = await createTenant(t.context.sys.baseUrl, "mismatch");
  const other = uniqueName("other");
  const before = (await su("GET", `/tenants/${name}`)).body;
  assertError(t, await su("PUT", `/tenants/${name}`, { tenant: { name: other, workers: 3 } }), 400, "mismatch");
  t.deepEqual((await su("GET", `/tenants/${name}`)).body, before);
  assertError(t, await su("GET", `/tenants/${other}`), 404, "other not created");
});

test("tenants - PUT with an invalid body is 400 and changes nothing", async (t) => {
  const su = as(t, SUPERADMIN);
  const { name } = await createTenant(t.context.sys.baseUrl, "putbad", { tenant: { workers: 1 } });
  const before = (await su("GET", `/tenants/${name}`)).body;
  const bodies: unknown[] = [
    { tenant: { name } },
    { tenant: { name, workers: -1 } },
    { tenant: { name, workers: 1, maxNodes: "many" } },
    { tenant: { workers: 1 } },
    { name, workers: 1 },
  ];
  for (const body of bodies) assertError(t, await su("PUT", `/tenants/${name}`, body), 400, JSON.stringify(body));
  t.deepEqual((await su("GET", `/tenants/${name}`)).body, before);
});

test("tenants - PUT of an unknown tenant is 404 and creates nothing", async (t) => {
  const su = as(t, SUPERADMIN);
  const name = uniqueName("ghost");
  assertError(t, await su("PUT", `/tenants/${name}`, { tenant: { name, workers: 0 } }), 404, "put unknown");
  assertError(t, await su("GET", `/tenants/${name}`), 404, "still unknown");
});

test("tenants - lowering quotas below current use is 409 once clusters exist", async (t) => {
  const su = as(t, SUPERADMIN);
  const { name } = await createTenant(t.context.sys.baseUrl, "usage", { tenant: { maxClusters: 10, maxNodes: 100 } });
  await setUsage(t.context.sys.nc, name, { clusters: 3, nodes: 12 });
  const before = (await su("GET", `/tenants/${name}`)).body;

  const refused: Array<Record<string, unknown>> = [
    { maxClusters: 2, maxNodes: 100 },
    { maxClusters: 10, maxNodes: 11 },
    { maxClusters: 0, maxNodes: 0 },
    { maxClusters: "2" },
  ];
  for (const quotas of refused) {
    const res = await su("PUT", `/tenants/${name}`, { tenant: { name, workers: 0, ...quotas } });
    assertError(t, res, 409, `quotas ${JSON.stringify(quotas)}`);
    t.deepEqual((await su("GET", `/tenants/${name}`)).body, before, `unchanged after ${JSON.stringify(quotas)}`);
  }

  // Exactly the current use, more, or no quota at all are fine.
  for (const quotas of [{ maxClusters: 3, maxNodes: 12 }, { maxClusters: 50, maxNodes: 500 }, {}]) {
    const tenant = { name, workers: 0, ...quotas };
    const res = await su("PUT", `/tenants/${name}`, { tenant });
    assertOk(t, res, `quotas ${JSON.stringify(quotas)}`);
    t.deepEqual((await su("GET", `/tenants/${name}`)).body, tenant);
  }
});

test("tenants - setting a first quota below current use is 409", async (t) => {
  const su = as(t, SUPERADMIN);
  const { name } = await createTenant(t.context.sys.baseUrl, "unlimited");
  await setUsage(t.context.sys.nc, name, { clusters: 2, nodes: 7 });
  assertError(
    t,
    await su("PUT", `/tenants/${name}`, { tenant: { name, workers: 0, maxClusters: 1 } }),
    409,
    "maxClusters",
  );
  assertError(t, await su("PUT", `/tenants/${name}`, { tenant: { name, workers: 0, maxNodes: 6 } }), 409, "maxNodes");
  t.deepEqual((await su("GET", `/tenants/${name}`)).body, { name, workers: 0 });
});

test("tenants - without clusters any quota, even 0, is accepted", async (t) => {
  const su = as(t, SUPERADMIN);
  const { name } = await createTenant(t.context.sys.baseUrl, "idle", { tenant: { maxClusters: 5, maxNodes: 5 } });
  const tenant = { name, workers: 0, maxClusters: 0, maxNodes: 0 };
  assertOk(t, await su("PUT", `/tenants/${name}`, { tenant }), "put zero quotas");
  t.deepEqual((await su("GET", `/tenants/${name}`)).body, tenant);
});

// -------------------------------------------------------------------------------------------------------------
// delete and list

test("tenants - DELETE of the superadmin tenant is 403", async (t) => {
  const su = as(t, SUPERADMIN);
  assertError(t, await su("DELETE", "/tenants/superadmin"), 403, "delete superadmin");
  assertOk(t, await su("GET", "/tenants/superadmin"), "superadmin still there");
});

test("tenants - DELETE while workers > 0 is 409, and answers 200 with an empty body once workers is 0", async (t) => {
  const su = as(t, SUPERADMIN);
  const { name } = await createTenant(t.context.sys.baseUrl, "busy", { tenant: { workers: 2 } });
  assertError(t, await su("DELETE", `/tenants/${name}`), 409, "delete with workers");
  t.deepEqual((await su("GET", `/tenants/${name}`)).body, { name, workers: 2 });

  assertOk(t, await su("PUT", `/tenants/${name}`, { tenant: { name, workers: 0 } }), "workers to 0");
  const deleted = await su("DELETE", `/tenants/${name}`);
  assertOk(t, deleted, "delete");
  t.is(deleted.text, "", "empty body");
  assertError(t, await su("GET", `/tenants/${name}`), 404, "gone");
  const names = ((await su("GET", "/tenants")).body as Array<{ name: string }>).map((x) => x.name);
  t.false(names.includes(name), "not listed");
});

test("tenants - DELETE of an unknown tenant is 404", async (t) => {
  assertError(t, await as(t, SUPERADMIN)("DELETE", `/tenants/${uniqueName("nobody")}`), 404, "delete unknown");
});

test("tenants - the list is sorted by name, holds full objects and includes superadmin", async (t) => {
  const su = as(t, SUPERADMIN);
  const suffix = uniqueName("list");
  const mine = [`zz-${suffix}`, `AA-${suffix}`, `mm-${suffix}`, `aa-${suffix}`, `0-${suffix}`];
  for (const [i, name] of mine.entries()) {
    assertOk(t, await su("POST", "/tenants", { tenant: { name, workers: i, region: `r${i}` } }), `create ${name}`);
  }
  const res = await su("GET", "/tenants");
  assertOk(t, res, "list");
  const list = res.body as Array<{ name: string; workers: number }>;
  t.true(Array.isArray(list));
  t.deepEqual(
    list.map((x) => x.name),
    [...list].sort(byName).map((x) => x.name),
    "sorted by name",
  );
  t.truthy(
    list.find((x) => x.name === "superadmin"),
    "superadmin listed",
  );
  for (const [i, name] of mine.entries())
    t.deepEqual(
      list.find((x) => x.name === name),
      { name, workers: i, region: `r${i}` },
    );
  const positions = [`0-${suffix}`, `AA-${suffix}`, `aa-${suffix}`, `mm-${suffix}`, `zz-${suffix}`].map((n) =>
    list.findIndex((x) => x.name === n),
  );
  t.deepEqual(
    positions,
    [...positions].sort((a, b) => a - b),
    "code-unit order",
  );
});

// -------------------------------------------------------------------------------------------------------------
// access

test("tenants - non-superadmin callers get 401 on every tenant and provisioner endpoint", async (t) => {
  const base = t.context.sys.baseUrl;
  const su = as(t, SUPERADMIN);
  const a = await createTenant(base, "acc-a");
  const b = await createTenant(base, "acc-b", { tenant: { workers: 0, description: "b" } });
  const fresh = uniqueName("never");
  const callers: Array<[string, Caller]> = [
    ["tenant admin", a.admin],
    ["ordinary user", a.user],
    ["ordinary user of the superadmin tenant", { user: "someone", tenant: "superadmin" }],
    ["admin of another tenant", b.admin],
  ];
  const endpoints: Array<[string, string, unknown?]> = [
    ["GET", "/tenants"],
    ["POST", "/tenants", { tenant: { name: fresh, workers: 0 } }],
    ["GET", `/tenants/${a.name}`],
    ["GET", `/tenants/${b.name}`],
    ["PUT", `/tenants/${a.name}`, { tenant: { name: a.name, workers: 7 } }],
    ["PUT", `/tenants/${b.name}`, { tenant: { name: b.name, workers: 7 } }],
    ["DELETE", `/tenants/${a.name}`],
    ["DELETE", `/tenants/${b.name}`],
    ["GET", "/provisioners"],
    ["GET", "/provisioners/some-provisioner"],
  ];
  const before = [(await su("GET", `/tenants/${a.name}`)).body, (await su("GET", `/tenants/${b.name}`)).body];
  for (const [who, caller] of callers) {
    for (const [method, path, body] of endpoints) {
      assertError(t, await api(base, method, path, { ...caller, body }), 401, `${who}: ${method} ${path}`);
    }
  }
  t.deepEqual([(await su("GET", `/tenants/${a.name}`)).body, (await su("GET", `/tenants/${b.name}`)).body], before);
  assertError(t, await su("GET", `/tenants/${fresh}`), 404, "nothing created");
});

// -------------------------------------------------------------------------------------------------------------
// bootstrap and re-creation

test("tenants - bootstrap copies the superadmin's catalog", async (t) => {
  const base = t.context.sys.baseUrl;
  const seed = await exportCatalog(base, SUPERADMIN);
  for (const kind of KINDS) t.true(seed[kind].length >= 2, `superadmin has ${kind}`);

  const copied = await createTenant(base, "boot", { bootstrap: true });
  t.deepEqual(await exportCatalog(base, copied.admin), seed, "bootstrap: true");
  for (const kind of KINDS) {
    const listed = await api(base, "GET", `/${kind}`, copied.user);
    t.deepEqual(listed.body, seed[kind], `${kind} listed to an ordinary user`);
  }

  // A copy, not a view: changing the new tenant's catalog leaves the superadmin's alone.
  const provider = seed.providers[0];
  const put = await api(base, "PUT", `/providers/${provider.name}`, {
    ...copied.admin,
    body: { ...provider, description: "changed in the copy" },
  });
  assertOk(t, put, "put in copy");
  assertOk(t, await api(base, "DELETE", `/services/${seed.services[0].name}`, copied.admin), "delete in copy");
  t.deepEqual(await exportCatalog(base, SUPERADMIN), seed, "superadmin unchanged");
});

test('tenants - bootstrap given as the string "true" also copies the catalog', async (t) => {
  const base = t.context.sys.baseUrl;
  const name = uniqueName("bootstr");
  const res = await api(base, "POST", "/tenants", {
    ...SUPERADMIN,
    body: { tenant: { name, workers: 0 }, bootstrap: "true" },
  });
  assertOk(t, res, "create");
  t.deepEqual(res.body, { name, workers: 0 }, "bootstrap is not part of the tenant");
  t.deepEqual(await exportCatalog(base, { user: "admin", tenant: name }), await exportCatalog(base, SUPERADMIN));
});

test("tenants - a tenant created without bootstrap starts with an empty catalog", async (t) => {
  const base = t.context.sys.baseUrl;
  const seed = await exportCatalog(base, SUPERADMIN);
  t.true(seed.providers.length > 0, "the superadmin has a catalog");
  for (const bootstrap of [undefined, false]) {
    const tenant = await createTenant(base, "noboot", { bootstrap });
    t.deepEqual(await exportCatalog(base, tenant.admin), emptyCatalog(), `bootstrap ${String(bootstrap)}`);
    for (const kind of KINDS) t.deepEqual((await api(base, "GET", `/${kind}`, tenant.admin)).body, [], kind);
  }
});

test("tenants - a deleted tenant is refused (401), and re-created it starts empty", async (t) => {
  const base = t.context.sys.baseUrl;
  const su = as(t, SUPERADMIN);
  const tenant = await createTenant(base, "reborn", { bootstrap: true });
  const extra = sample.hardwaretypes(uniqueName("extra"));
  assertOk(t, await api(base, "POST", "/hardwaretypes", { ...tenant.admin, body: extra }), "add an entity");
  t.not((await exportCatalog(base, tenant.admin)).providers.length, 0);

  assertOk(t, await su("DELETE", `/tenants/${tenant.name}`), "delete");
  await eventually(async () => (await api(base, "GET", "/providers", tenant.admin)).status === 401, {
    what: "the deleted tenant's admin is refused",
  });
  assertError(t, await api(base, "GET", "/export", tenant.admin), 401, "export of a deleted tenant");
  assertError(
    t,
    await api(base, "POST", "/providers", { ...tenant.admin, body: sample.providers("p1") }),
    401,
    "create",
  );

  assertOk(t, await su("POST", "/tenants", { tenant: { name: tenant.name, workers: 0 } }), "re-create");
  const catalog = await eventually(
    async () => {
      const res = await api(base, "GET", "/export", tenant.admin);
      return res.status === 200 ? res.body : false;
    },
    { what: "the re-created tenant is usable" },
  );
  t.deepEqual(catalog, emptyCatalog());
  assertError(t, await api(base, "GET", `/hardwaretypes/${extra.name}`, tenant.admin), 404, "old entity gone");
});

test("tenants - a re-created tenant with bootstrap holds exactly the superadmin catalog", async (t) => {
  const base = t.context.sys.baseUrl;
  const su = as(t, SUPERADMIN);
  const tenant = await createTenant(base, "reboot");
  assertOk(t, await api(base, "POST", "/imagetypes", { ...tenant.admin, body: sample.imagetypes("leftover") }), "add");
  assertOk(t, await su("DELETE", `/tenants/${tenant.name}`), "delete");
  const body = { tenant: { name: tenant.name, workers: 0 }, bootstrap: true };
  assertOk(t, await su("POST", "/tenants", body), "re-create");
  const seed = await exportCatalog(base, SUPERADMIN);
  const catalog = await eventually(
    async () => {
      const res = await api(base, "GET", "/export", tenant.admin);
      return res.status === 200 ? res.body : false;
    },
    { what: "the re-created tenant is usable" },
  );
  t.deepEqual(catalog, seed);
});
