/**
 * The per-tenant catalog through the REST API (docs/api.md; docs/catalog.md): CRUD of providers,
 * hardware types, image types, services and cluster templates, roles, tenant isolation, validation.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import type { CatalogKind } from "@corral/contracts";
import { api, type Caller } from "../helpers/api.js";
import { assertError, assertOk } from "../helpers/assertions.js";
import { changed, createTenant, KINDS, sample, uniqueName, type TestTenant } from "../helpers/catalog.js";
import { registerFixturePluginTypes } from "../helpers/registry.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

const test = anyTest as TestFn<{ sys: TestSystem }>;
type T = ExecutionContext<{ sys: TestSystem }>;

test.before(async (t) => {
  t.context.sys = await startSystem();
  await registerFixturePluginTypes(t.context.sys.nc);
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
});

const call = (t: T, caller: Caller, method: string, path: string, body?: unknown) =>
  api(t.context.sys.baseUrl, method, path, { ...caller, body });
const tenant = (t: T, prefix: string) => createTenant(t.context.sys.baseUrl, prefix);
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Creates `entity` of `kind` as the tenant admin, failing the test unless it is a 200. */
async function create(t: T, who: TestTenant, kind: CatalogKind, entity: Record<string, unknown>) {
  const res = await call(t, who.admin, "POST", `/${kind}`, entity);
  assertOk(t, res, `create ${kind} ${String(entity["name"])}`);
  return res;
}

/** Everything a tenant's catalog holds, read through the API. */
async function state(t: T, who: TestTenant) {
  const res = await call(t, who.admin, "GET", "/export");
  assertOk(t, res, "export");
  return res.body;
}

// -------------------------------------------------------------------------------------------------------------
// The same contract for every kind

for (const kind of KINDS) {
  test(`catalog - ${kind} - create answers 200 with the stored object and get returns it`, async (t) => {
    const who = await tenant(t, "create");
    const entity = sample[kind](uniqueName("e"));
    const created = await create(t, who, kind, entity);
    t.deepEqual(created.body, entity);
    const got = await call(t, who.admin, "GET", `/${kind}/${entity["name"]}`);
    assertOk(t, got, "get");
    t.deepEqual(got.body, entity);
  });

  test(`catalog - ${kind} - the list is an array of full objects sorted by name`, async (t) => {
    const who = await tenant(t, "list");
    t.deepEqual((await call(t, who.admin, "GET", `/${kind}`)).body, [], "empty at first");
    const entities = ["m-1", "Z.last", "a_first", "B-2", "0.zero", "b-3"].map((n) => sample[kind](n));
    for (const e of entities) await create(t, who, kind, e);
    const res = await call(t, who.admin, "GET", `/${kind}`);
    assertOk(t, res, "list");
    t.deepEqual(
      res.body,
      [...entities].sort((a, b) => byName(a as { name: string }, b as { name: string })),
    );
  });

  test(`catalog - ${kind} - PUT replaces the entity and answers the stored object`, async (t) => {
    const who = await tenant(t, "put");
    const name = uniqueName("e");
    await create(t, who, kind, sample[kind](name));
    const replacement = changed[kind](name);
    const put = await call(t, who.admin, "PUT", `/${kind}/${name}`, replacement);
    assertOk(t, put, "put");
    t.deepEqual(put.body, replacement);
    t.deepEqual((await call(t, who.admin, "GET", `/${kind}/${name}`)).body, replacement);
    t.deepEqual((await call(t, who.admin, "GET", `/${kind}`)).body, [replacement]);
  });

  test(`catalog - ${kind} - PUT with a different name in the body is 400 and changes nothing`, async (t) => {
    const who = await tenant(t, "rename");
    const name = uniqueName("e");
    await create(t, who, kind, sample[kind](name));
    const before = await state(t, who);
    const res = await call(t, who.admin, "PUT", `/${kind}/${name}`, changed[kind](`${name}-other`));
    assertError(t, res, 400, "name mismatch");
    t.deepEqual(await state(t, who), before);
  });

  test(`catalog - ${kind} - DELETE answers 200 with an empty body, then GET is 404`, async (t) => {
    const who = await tenant(t, "delete");
    const keep = sample[kind](uniqueName("keep"));
    const gone = sample[kind](uniqueName("gone"));
    await create(t, who, kind, keep);
    await create(t, who, kind, gone);
    const res = await call(t, who.admin, "DELETE", `/${kind}/${gone["name"]}`);
    assertOk(t, res, "delete");
    t.is(res.text, "", "empty body");
    assertError(t, await call(t, who.admin, "GET", `/${kind}/${gone["name"]}`), 404, "get after delete");
    t.deepEqual((await call(t, who.admin, "GET", `/${kind}`)).body, [keep], "list after delete");
    assertError(t, await call(t, who.admin, "DELETE", `/${kind}/${gone["name"]}`), 404, "second delete");
    // The name is free again.
    await create(t, who, kind, changed[kind](gone["name"] as string));
  });

  test(`catalog - ${kind} - creating an existing name is 400 and keeps the first`, async (t) => {
    const who = await tenant(t, "dup");
    const name = uniqueName("e");
    await create(t, who, kind, sample[kind](name));
    const before = await state(t, who);
    assertError(t, await call(t, who.admin, "POST", `/${kind}`, changed[kind](name)), 400, "duplicate");
    t.deepEqual(await state(t, who), before);
  });

  test(`catalog - ${kind} - PUT of a missing entity is 400 and creates nothing`, async (t) => {
    const who = await tenant(t, "putmissing");
    const name = uniqueName("ghost");
    assertError(t, await call(t, who.admin, "PUT", `/${kind}/${name}`, sample[kind](name)), 400, "put missing");
    assertError(t, await call(t, who.admin, "GET", `/${kind}/${name}`), 404, "still missing");
    t.deepEqual((await call(t, who.admin, "GET", `/${kind}`)).body, []);
  });

  test(`catalog - ${kind} - GET and DELETE of a missing entity are 404`, async (t) => {
    const who = await tenant(t, "missing");
    const name = uniqueName("ghost");
    assertError(t, await call(t, who.admin, "GET", `/${kind}/${name}`), 404, "get missing");
    assertError(t, await call(t, who.user, "GET", `/${kind}/${name}`), 404, "get missing as a user");
    assertError(t, await call(t, who.admin, "DELETE", `/${kind}/${name}`), 404, "delete missing");
  });

  test(`catalog - ${kind} - ordinary users can read but get 401 on writes`, async (t) => {
    const who = await tenant(t, "roles");
    const entity = sample[kind](uniqueName("e"));
    await create(t, who, kind, entity);
    const before = await state(t, who);
    const name = entity["name"] as string;

    const list = await call(t, who.user, "GET", `/${kind}`);
    assertOk(t, list, "list as user");
    t.deepEqual(list.body, [entity]);
    const got = await call(t, who.user, "GET", `/${kind}/${name}`);
    assertOk(t, got, "get as user");
    t.deepEqual(got.body, entity);

    const other = uniqueName("other");
    assertError(t, await call(t, who.user, "POST", `/${kind}`, sample[kind](other)), 401, "create as user");
    assertError(t, await call(t, who.user, "PUT", `/${kind}/${name}`, changed[kind](name)), 401, "put as user");
    assertError(t, await call(t, who.user, "DELETE", `/${kind}/${name}`), 401, "delete as user");
    t.deepEqual(await state(t, who), before);
  });

  test(`catalog - ${kind} - names with dots, underscores, dashes and 255 characters work in every path`, async (t) => {
    const who = await tenant(t, "names");
    // "x.y" and "x_2Ey" must stay two entities: names are escaped into KV key tokens ("." -> "_2E", "_" -> "_5F").
    const names = [
      "x.y",
      "x_2Ey",
      "x_y",
      "...",
      "_",
      "-",
      "A.b_C-9",
      ".".repeat(255),
      `${"_".repeat(200)}${"x".repeat(55)}`,
    ];
    for (const name of names) {
      const entity = sample[kind](name);
      await create(t, who, kind, entity);
      const path = `/${kind}/${encodeURIComponent(name)}`;
      t.deepEqual((await call(t, who.admin, "GET", path)).body, entity, `get ${name}`);
      const put = await call(t, who.admin, "PUT", path, changed[kind](name));
      assertOk(t, put, `put ${name}`);
      t.deepEqual(put.body, changed[kind](name));
    }
    const listed = (await call(t, who.admin, "GET", `/${kind}`)).body as Array<{ name: string }>;
    t.deepEqual(
      listed.map((e) => e.name),
      [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    for (const name of names) {
      assertOk(t, await call(t, who.admin, "DELETE", `/${kind}/${encodeURIComponent(name)}`), `delete ${name}`);
    }
    t.deepEqual((await call(t, who.admin, "GET", `/${kind}`)).body, [], "all deleted");
  });

  test(`catalog - ${kind} - entities are isolated per tenant`, async (t) => {
    const a = await tenant(t, "iso-a");
    const b = await tenant(t, "iso-b");
    const name = uniqueName("shared");
    await create(t, a, kind, sample[kind](name));
    const aBefore = await state(t, a);

    t.deepEqual((await call(t, b.admin, "GET", `/${kind}`)).body, [], "B lists nothing");
    assertError(t, await call(t, b.admin, "GET", `/${kind}/${name}`), 404, "B cannot get A's");
    assertError(t, await call(t, b.admin, "PUT", `/${kind}/${name}`, changed[kind](name)), 400, "B cannot update A's");
    assertError(t, await call(t, b.admin, "DELETE", `/${kind}/${name}`), 404, "B cannot delete A's");
    t.deepEqual(await state(t, a), aBefore, "A unchanged");

    // The same name in B is B's own entity.
    await create(t, b, kind, changed[kind](name));
    t.deepEqual((await call(t, b.admin, "GET", `/${kind}/${name}`)).body, changed[kind](name));
    assertOk(t, await call(t, b.admin, "DELETE", `/${kind}/${name}`), "B deletes its own");
    t.deepEqual(await state(t, a), aBefore, "A still unchanged");
  });
}

// -------------------------------------------------------------------------------------------------------------
// Invalid bodies, per kind: each is a 400 that stores nothing

/** `[what, body, createOnly]`: `createOnly` when a PUT of that body is valid (providers keep absent fields). */
const invalid: Record<CatalogKind, Array<[string, (name: string) => unknown, boolean?]>> = {
  providers: [
    ["no providertype", (name) => ({ name, description: "d" }), true],
    ["empty providertype", (name) => ({ ...sample.providers(name), providertype: "" })],
    ["unknown providertype", (name) => ({ ...sample.providers(name), providertype: "no-such-type" })],
    ["providertype not a string", (name) => ({ ...sample.providers(name), providertype: 5 })],
    ["description not a string", (name) => ({ ...sample.providers(name), description: 5 })],
    ["provisioner an array", (name) => ({ ...sample.providers(name), provisioner: ["a"] })],
    ["provisioner a string", (name) => ({ ...sample.providers(name), provisioner: "x" })],
  ],
  hardwaretypes: [
    ["no providermap", (name) => ({ name, description: "d" })],
    ["providermap an array", (name) => ({ name, providermap: [] })],
    ["providermap entry not an object", (name) => ({ name, providermap: { aws: "t3.small" } })],
    ["providermap value an object", (name) => ({ name, providermap: { aws: { flavor: { size: 1 } } } })],
    ["providermap value null", (name) => ({ name, providermap: { aws: { flavor: null } } })],
    ["providermap key not a NAME", (name) => ({ name, providermap: { "bad key": { flavor: "x" } } })],
    ["description not a string", (name) => ({ ...sample.hardwaretypes(name), description: [] })],
  ],
  imagetypes: [
    ["no providermap", (name) => ({ name })],
    ["providermap a string", (name) => ({ name, providermap: "aws" })],
    ["providermap value an array", (name) => ({ name, providermap: { aws: { image: ["a"] } } })],
    ["providermap key not a NAME", (name) => ({ name, providermap: { "a/b": { image: "x" } } })],
  ],
  services: [
    ["no provisioner", (name) => ({ name, description: "d" })],
    ["no actions", (name) => ({ name, provisioner: {} })],
    [
      "unknown action name",
      (name) => ({ name, provisioner: { actions: { deploy: { type: "chef-solo", fields: { run_list: "r" } } } } }),
    ],
    [
      "unknown automator type",
      (name) => ({ name, provisioner: { actions: { install: { type: "puppet", fields: { run_list: "r" } } } } }),
    ],
    ["action without type", (name) => ({ name, provisioner: { actions: { install: { fields: { run_list: "r" } } } } })],
    [
      "chef-solo without run_list",
      (name) => ({
        name,
        provisioner: { actions: { install: { type: "chef-solo", fields: { json_attributes: "{}" } } } },
      }),
    ],
    ["chef-solo without fields", (name) => ({ name, provisioner: { actions: { install: { type: "chef-solo" } } } })],
    [
      "chef-solo with an empty run_list",
      (name) => ({ name, provisioner: { actions: { install: { type: "chef-solo", fields: { run_list: "" } } } } }),
    ],
    [
      "shell without script",
      (name) => ({ name, provisioner: { actions: { start: { type: "shell", fields: { args: "-v" } } } } }),
    ],
    [
      "undeclared field",
      (name) => ({
        name,
        provisioner: { actions: { install: { type: "chef-solo", fields: { run_list: "r", colour: "red" } } } },
      }),
    ],
    [
      "field value an object",
      (name) => ({
        name,
        provisioner: { actions: { install: { type: "chef-solo", fields: { run_list: { a: 1 } } } } },
      }),
    ],
    ["dependencies not an object", (name) => ({ ...sample.services(name), dependencies: ["base"] })],
    [
      "requires not a list of names",
      (name) => ({ ...sample.services(name), dependencies: { install: { requires: "base" } } }),
    ],
    [
      "conflicts holding a bad name",
      (name) => ({ ...sample.services(name), dependencies: { conflicts: ["bad name"] } }),
    ],
  ],
  clustertemplates: [
    [
      "no compatibility",
      (name) => {
        const { compatibility: _c, ...rest } = sample.clustertemplates(name);
        return rest;
      },
    ],
    [
      "no defaults",
      (name) => {
        const { defaults: _d, ...rest } = sample.clustertemplates(name);
        return rest;
      },
    ],
    ["no defaults.provider", (name) => withDefaults(name, { provider: undefined })],
    ["no defaults.config", (name) => withDefaults(name, { config: undefined })],
    ["no defaults.services", (name) => withDefaults(name, { services: undefined })],
    ["default service outside compatibility", (name) => withDefaults(name, { services: ["base", "postgresql"] })],
    ["default hardware type outside compatibility", (name) => withDefaults(name, { hardwaretype: "large" })],
    ["default image type outside compatibility", (name) => withDefaults(name, { imagetype: "ubuntu24" })],
    [
      "size.max < size.min",
      (name) => ({ ...sample.clustertemplates(name), constraints: { size: { min: 5, max: 4 } } }),
    ],
    [
      "size.max < size.min as strings",
      (name) => ({ ...sample.clustertemplates(name), constraints: { size: { min: "5", max: "4" } } }),
    ],
    ["size.min 0", (name) => ({ ...sample.clustertemplates(name), constraints: { size: { min: 0 } } })],
    ["size.max 0", (name) => ({ ...sample.clustertemplates(name), constraints: { size: { max: 0 } } })],
    [
      "size.min not an integer",
      (name) => ({ ...sample.clustertemplates(name), constraints: { size: { min: "three" } } }),
    ],
    ["quantities.max < quantities.min", (name) => withQuantities(name, { min: "3", max: "2" })],
    ["negative quantities.min", (name) => withQuantities(name, { min: -1 })],
    ["fractional quantities.max", (name) => withQuantities(name, { max: 1.5 })],
    ["lease initial above max", (name) => withLease(name, { initial: "2h", max: "1h", step: 0 })],
    ["lease initial above max in ms", (name) => withLease(name, { initial: 7200000, max: 3600000 })],
    ["lease with an unknown unit", (name) => withLease(name, { initial: "10x" })],
    ["lease with a fractional value", (name) => withLease(name, { initial: "1.5h" })],
    ["negative lease", (name) => withLease(name, { step: -1 })],
    ["lease not a number", (name) => withLease(name, { max: true })],
    ["dnsSuffix not a DNS suffix", (name) => withDefaults(name, { dnsSuffix: "bad_suffix!" })],
    ["dnsSuffix with an empty label", (name) => withDefaults(name, { dnsSuffix: "example..com" })],
  ],
};

function withDefaults(name: string, changes: Record<string, unknown>) {
  const t = sample.clustertemplates(name);
  return { ...t, defaults: { ...t["defaults"], ...changes } };
}
function withQuantities(name: string, quantities: Record<string, unknown>) {
  return { ...sample.clustertemplates(name), constraints: { services: { base: { quantities } } } };
}
function withLease(name: string, leaseduration: Record<string, unknown>) {
  return { ...sample.clustertemplates(name), administration: { leaseduration } };
}

/** Bad values of `name` every kind refuses. */
const BAD_NAMES: unknown[] = ["", "bad name", "a/b", "ümlaut", "a*", "a>b", "x".repeat(256), 42, null, ["a"], { a: 1 }];

for (const kind of KINDS) {
  test(`catalog - ${kind} - invalid bodies are 400 on create and update and store nothing`, async (t) => {
    const who = await tenant(t, "invalid");
    const existing = uniqueName("existing");
    await create(t, who, kind, sample[kind](existing));
    const before = await state(t, who);
    for (const [what, make, createOnly] of invalid[kind]) {
      const fresh = uniqueName("fresh");
      assertError(t, await call(t, who.admin, "POST", `/${kind}`, make(fresh)), 400, `create: ${what}`);
      if (!createOnly)
        assertError(t, await call(t, who.admin, "PUT", `/${kind}/${existing}`, make(existing)), 400, `update: ${what}`);
    }
    for (const name of BAD_NAMES) {
      const body = { ...sample[kind]("placeholder"), name };
      assertError(
        t,
        await call(t, who.admin, "POST", `/${kind}`, body),
        400,
        `create with name ${JSON.stringify(name)}`,
      );
    }
    const { name: _n, ...nameless } = sample[kind]("placeholder");
    assertError(t, await call(t, who.admin, "POST", `/${kind}`, nameless), 400, "create without a name");
    t.deepEqual(await state(t, who), before, "nothing stored");
  });
}

// -------------------------------------------------------------------------------------------------------------
// Providers

test("catalog - providers - PUT keeps absent description, providertype and provisioner", async (t) => {
  const who = await tenant(t, "keep");
  const name = uniqueName("p");
  const original = sample.providers(name);
  await create(t, who, "providers", original);

  const onlyName = await call(t, who.admin, "PUT", `/providers/${name}`, { name });
  assertOk(t, onlyName, "put with only the name");
  t.deepEqual(onlyName.body, original);

  const withNulls = await call(t, who.admin, "PUT", `/providers/${name}`, {
    name,
    description: null,
    providertype: null,
    provisioner: null,
  });
  assertOk(t, withNulls, "put with nulls");
  t.deepEqual(withNulls.body, original);

  const description = await call(t, who.admin, "PUT", `/providers/${name}`, { name, description: "new words" });
  assertOk(t, description, "put description");
  t.deepEqual(description.body, { ...original, description: "new words" });

  const type = await call(t, who.admin, "PUT", `/providers/${name}`, { name, providertype: "openstack" });
  assertOk(t, type, "put providertype");
  const expected = { ...original, description: "new words", providertype: "openstack" };
  t.deepEqual(type.body, expected);

  const settings = { auth_url: "https://keystone.example.com" };
  const provisioner = await call(t, who.admin, "PUT", `/providers/${name}`, { name, provisioner: settings });
  assertOk(t, provisioner, "put provisioner");
  t.deepEqual(provisioner.body, { ...expected, provisioner: settings });
  t.deepEqual((await call(t, who.admin, "GET", `/providers/${name}`)).body, { ...expected, provisioner: settings });
});

test("catalog - providers - PUT without a name in the body takes the name from the path", async (t) => {
  const who = await tenant(t, "pathname");
  const name = uniqueName("p");
  await create(t, who, "providers", sample.providers(name));
  const res = await call(t, who.admin, "PUT", `/providers/${name}`, { description: "from path" });
  assertOk(t, res, "put");
  t.deepEqual(res.body, { ...sample.providers(name), description: "from path" });
});

test("catalog - clustertemplates - PUT without a name in the body stores the template in its canonical key order", async (t) => {
  const who = await tenant(t, "tplorder");
  const name = uniqueName("t");
  await create(t, who, "clustertemplates", sample.clustertemplates(name));
  const { name: _, ...unnamed } = sample.clustertemplates(name);
  // Given last and first: the stored order is the canonical one either way.
  const reordered = { administration: unnamed.administration, constraints: unnamed.constraints, defaults: unnamed.defaults, compatibility: unnamed.compatibility, description: "again" };
  const canonical = ["name", "description", "compatibility", "defaults", "constraints", "administration"];
  for (const body of [unnamed, reordered, { ...reordered, name }]) {
    const put = await call(t, who.admin, "PUT", `/clustertemplates/${name}`, body);
    assertOk(t, put, "put");
    t.deepEqual(Object.keys(put.body ?? {}), canonical);
    const stored = (await call(t, who.admin, "GET", `/clustertemplates/${name}`)).body;
    t.deepEqual(Object.keys(stored ?? {}), canonical);
    t.deepEqual(stored, { name, ...body });
  }
});

test("catalog - providers - a provider created without provisioner reads back an empty object", async (t) => {
  const who = await tenant(t, "noprov");
  const name = uniqueName("p");
  const created = await create(t, who, "providers", { name, providertype: "aws" });
  t.deepEqual(created.body, { name, providertype: "aws", provisioner: {} });
  t.deepEqual((await call(t, who.admin, "GET", `/providers/${name}`)).body, {
    name,
    providertype: "aws",
    provisioner: {},
  });
  const nulled = uniqueName("p");
  const withNull = await create(t, who, "providers", { name: nulled, providertype: "aws", provisioner: null });
  t.deepEqual(withNull.body, { name: nulled, providertype: "aws", provisioner: {} });
});

test("catalog - providers - an unknown providertype is 400 on create and on update", async (t) => {
  const who = await tenant(t, "ptype");
  const name = uniqueName("p");
  assertError(t, await call(t, who.admin, "POST", "/providers", { name, providertype: "vmware" }), 400, "create");
  await create(t, who, "providers", sample.providers(name));
  const before = await state(t, who);
  assertError(
    t,
    await call(t, who.admin, "PUT", `/providers/${name}`, { name, providertype: "vmware" }),
    400,
    "update",
  );
  t.deepEqual(await state(t, who), before);
});

// -------------------------------------------------------------------------------------------------------------
// Hardware and image types

test("catalog - hardwaretypes - numbers and booleans in the provider map are stored as strings", async (t) => {
  const who = await tenant(t, "hwstr");
  const name = uniqueName("hw");
  const created = await create(t, who, "hardwaretypes", {
    name,
    providermap: { aws: { flavor: "m1", vcpu: 2, ebs: true } },
  });
  t.deepEqual(created.body, { name, providermap: { aws: { flavor: "m1", vcpu: "2", ebs: "true" } } });
});

test("catalog - hardwaretypes - a provider map key __proto__ is refused with 400 and nothing is stored", async (t) => {
  const who = await tenant(t, "hwproto");
  const name = uniqueName("hw");
  // msgpack decoders rename `__proto__` keys, so such a key could never be read back: refuse it up front.
  const raw = `{"name":"${name}","providermap":{"__proto__":{"flavor":"x"},"aws":{"flavor":"y"}}}`;
  const res = await api(t.context.sys.baseUrl, "POST", "/hardwaretypes", { ...who.admin, rawBody: raw });
  t.is(res.status, 400);
  t.regex(res.body.message, /__proto__/);
  t.is((await call(t, who.admin, "GET", `/hardwaretypes/${name}`)).status, 404);
});

// -------------------------------------------------------------------------------------------------------------
// Services

test("catalog - services - absent dependencies and fields read back complete and empty", async (t) => {
  const who = await tenant(t, "svcdefaults");
  const name = uniqueName("svc");
  const body = {
    name,
    provisioner: {
      actions: {
        start: { type: "chef-solo", fields: { run_list: "recipe[a]" } },
        install: { type: "shell", fields: { script: "i.sh" } },
      },
    },
  };
  const created = await create(t, who, "services", body);
  const expected = {
    name,
    dependencies: {
      provides: [],
      conflicts: [],
      install: { requires: [], uses: [] },
      runtime: { requires: [], uses: [] },
    },
    provisioner: body.provisioner,
  };
  t.deepEqual(created.body, expected);
  t.deepEqual((await call(t, who.admin, "GET", `/services/${name}`)).body, expected);
});

test("catalog - services - every action name is accepted", async (t) => {
  const who = await tenant(t, "svcactions");
  const name = uniqueName("svc");
  const actions = Object.fromEntries(
    ["install", "configure", "initialize", "start", "stop", "remove"].map((a) => [
      a,
      { type: "shell", fields: { script: `${a}.sh` } },
    ]),
  );
  const entity = { ...sample.services(name), provisioner: { actions } };
  t.deepEqual((await create(t, who, "services", entity)).body, entity);
});

// -------------------------------------------------------------------------------------------------------------
// Cluster templates

test("catalog - clustertemplates - empty compatibility lists allow any defaults", async (t) => {
  const who = await tenant(t, "tplopen");
  const name = uniqueName("tpl");
  const entity = {
    name,
    compatibility: { hardwaretypes: [], imagetypes: [], services: [] },
    defaults: {
      services: ["anything"],
      provider: "aws-us-east-1",
      config: {},
      hardwaretype: "any-hw",
      imagetype: "any-image",
    },
  };
  t.deepEqual((await create(t, who, "clustertemplates", entity)).body, entity);
});

test("catalog - clustertemplates - sizes and quantities given as numeric strings are stored as integers", async (t) => {
  const who = await tenant(t, "tplnum");
  const name = uniqueName("tpl");
  const base = sample.clustertemplates(name);
  const body = {
    ...base,
    constraints: {
      size: { min: "2", max: "8" },
      services: {
        base: { quantities: { min: "1", max: "1" } },
        web: { quantities: { min: "0" }, hardwaretypes: ["small"] },
      },
    },
  };
  const expected = {
    ...base,
    constraints: {
      size: { min: 2, max: 8 },
      services: {
        base: { quantities: { min: 1, max: 1 } },
        web: { quantities: { min: 0 }, hardwaretypes: ["small"] },
      },
    },
  };
  t.deepEqual((await create(t, who, "clustertemplates", body)).body, expected);
  t.deepEqual((await call(t, who.admin, "GET", `/clustertemplates/${name}`)).body, expected);
});

test("catalog - clustertemplates - lease durations accept milliseconds and 10s, 15m, 2h, 1d", async (t) => {
  const who = await tenant(t, "tpllease");
  const cases: Array<[Record<string, unknown>, Record<string, number>]> = [
    [
      { initial: "10s", max: "15m", step: "2h" },
      { initial: 10_000, max: 900_000, step: 7_200_000 },
    ],
    [
      { initial: "1d", max: "2d", step: "0" },
      { initial: 86_400_000, max: 172_800_000, step: 0 },
    ],
    [
      { initial: "5000", max: 5000, step: 1 },
      { initial: 5000, max: 5000, step: 1 },
    ],
    [
      { initial: "2h", max: 0, step: 0 },
      { initial: 7_200_000, max: 0, step: 0 },
    ],
    [
      { initial: 0, max: 0, step: 0 },
      { initial: 0, max: 0, step: 0 },
    ],
    [{ initial: "1h" }, { initial: 3_600_000, max: 0, step: 0 }],
  ];
  for (const [given, stored] of cases) {
    const name = uniqueName("tpl");
    const res = await create(t, who, "clustertemplates", withLease(name, given));
    t.deepEqual(res.body?.administration, { leaseduration: stored }, JSON.stringify(given));
    t.deepEqual((await call(t, who.admin, "GET", `/clustertemplates/${name}`)).body?.administration, {
      leaseduration: stored,
    });
  }
});

test("catalog - clustertemplates - layout constraints are kept", async (t) => {
  const who = await tenant(t, "tpllayout");
  const name = uniqueName("tpl");
  const entity = {
    ...sample.clustertemplates(name),
    constraints: {
      layout: {
        mustcoexist: [["base", "web"]],
        cantcoexist: [
          ["web", "db"],
          ["a", "b", "c"],
        ],
      },
      services: { web: { hardwaretypes: ["small"], imagetypes: ["debian12"], quantities: { min: 1, max: 3 } } },
    },
  };
  t.deepEqual((await create(t, who, "clustertemplates", entity)).body, entity);
});
