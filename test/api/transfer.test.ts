/**
 * Export and import through the REST API (docs/api.md), with the test catalog (test/fixtures/catalog): a round
 * trip keeps every entity, a bad import changes nothing, an import replaces the whole catalog.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { REDACTED, type CatalogKind } from "@corral/contracts";
import { api, SUPERADMIN } from "../helpers/api.js";
import { assertError, assertOk } from "../helpers/assertions.js";
import { createTenant, emptyCatalog, exportCatalog, KINDS, sample, type TestTenant } from "../helpers/catalog.js";
import { asSeenByUsers, rawFixtureCatalog } from "../helpers/fixture-catalog.js";
import { registerFixturePluginTypes } from "../helpers/registry.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

const test = anyTest as TestFn<{ sys: TestSystem }>;
type T = ExecutionContext<{ sys: TestSystem }>;
type Catalog = Record<CatalogKind, any[]>;

test.before(async (t) => {
  t.context.sys = await startSystem();
  await registerFixturePluginTypes(t.context.sys.nc);
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
});

/** The test catalog as files hold it (one entity per file, in file order). */
const fixture = (): Catalog => rawFixtureCatalog();

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const toInteger = (v: unknown) => (typeof v === "string" && /^-?[0-9]+$/.test(v) ? Number(v) : v);
const MS_PER_UNIT: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** A lease duration as stored: milliseconds, from a number, a numeric string or `<n>s|m|h|d`. */
const toMillis = (v: unknown) => {
  const duration = typeof v === "string" ? /^([0-9]+)([smhd])$/.exec(v) : null;
  return duration ? Number(duration[1]) * MS_PER_UNIT[duration[2]!]! : toInteger(v);
};

function integers(obj: Record<string, unknown> | undefined, keys: string[], convert = toInteger): void {
  if (!obj) return;
  for (const key of keys) if (key in obj) obj[key] = convert(obj[key]);
}

/**
 * What the export must equal: the catalog with numeric strings of `size` and `quantities` as integers,
 * `leaseduration`s in milliseconds, numbers and booleans in hardware and image `providermap`s as strings, and
 * every list sorted by name; nothing else is touched (name lists stay as given, repeats included).
 */
function canonical(catalog: Catalog): Catalog {
  const out = structuredClone(catalog);
  for (const machineType of [...out.hardwaretypes, ...out.imagetypes]) {
    for (const settings of Object.values(machineType.providermap ?? {}) as Record<string, unknown>[]) {
      for (const [key, value] of Object.entries(settings)) settings[key] = String(value);
    }
  }
  for (const template of out.clustertemplates) {
    const constraints = template.constraints;
    integers(constraints?.size, ["min", "max"]);
    for (const service of Object.values(constraints?.services ?? {}) as any[])
      integers(service.quantities, ["min", "max"]);
    integers(template.administration?.leaseduration, ["initial", "max", "step"], toMillis);
  }
  for (const kind of KINDS) out[kind].sort(byName);
  return out;
}

async function importCatalog(t: T, who: TestTenant, body: unknown) {
  return api(t.context.sys.baseUrl, "POST", "/import", { ...who.admin, body });
}

/** A tenant holding the whole test catalog. */
async function tenantWithFixture(t: T, prefix: string): Promise<TestTenant> {
  const who = await createTenant(t.context.sys.baseUrl, prefix);
  assertOk(t, await importCatalog(t, who, fixture()), "import the test catalog");
  return who;
}

test("transfer - the test catalog imports and exports back unchanged, numbers canonicalised", async (t) => {
  const base = t.context.sys.baseUrl;
  const who = await createTenant(base, "roundtrip");
  const source = fixture();
  for (const kind of KINDS) t.true(source[kind].length > 0, `the test catalog has ${kind}`);
  // A name listed twice in one layout set, as an admin may write it: kept as given, not deduplicated.
  const k8s = source.clustertemplates.find((c) => c.name === "k8s-distributed");
  k8s.constraints.layout.mustcoexist[1].push("kube-proxy");
  const res = await importCatalog(t, who, source);
  assertOk(t, res, "import");

  const expected = canonical(source);
  const exported = await exportCatalog(base, who.admin);
  t.deepEqual(Object.keys(exported).sort(), [...KINDS].sort(), "exactly the five kinds");
  for (const kind of KINDS) t.deepEqual(exported[kind], expected[kind], `export of ${kind}`);

  // The same entities through the single-entity API, also for an ordinary user (who sees no secret fields).
  const seenByUsers: Catalog = { ...expected, providers: asSeenByUsers(expected.providers) };
  const seen = (name: string) => seenByUsers.providers.find((p) => p.name === name)?.provisioner;
  t.is(seen("aws-eu-west-1")?.secret_access_key, REDACTED, "aws-eu-west-1's secret_access_key (a password field) is hidden");
  t.is(seen("gce-europe")?.service_account_key, REDACTED, "gce-europe's service_account_key (a sensitive field) is hidden");
  t.is(seen("gce-europe")?.zone, "europe-west1-b", "other fields are shown");
  for (const kind of KINDS) {
    t.deepEqual((await api(base, "GET", `/${kind}`, who.admin)).body, expected[kind], `list of ${kind} (admin)`);
    t.deepEqual((await api(base, "GET", `/${kind}`, who.user)).body, seenByUsers[kind], `list of ${kind}`);
    for (const entity of seenByUsers[kind]) {
      t.deepEqual((await api(base, "GET", `/${kind}/${entity.name}`, who.user)).body, entity, `${kind}/${entity.name}`);
    }
  }

  // Exporting and importing the export again is a fixed point.
  assertOk(t, await importCatalog(t, who, exported), "re-import the export");
  t.deepEqual(await exportCatalog(base, who.admin), exported);
});

/** One broken entity per kind, at a position in the middle of its list. */
const breakers: Record<CatalogKind, [string, (e: any) => any]> = {
  providers: ["unknown providertype", (e) => ({ ...e, providertype: "vmware" })],
  hardwaretypes: ["providermap not an object", (e) => ({ ...e, providermap: ["m1.small"] })],
  imagetypes: ["providermap value an object", (e) => ({ ...e, providermap: { aws: { image: { id: 1 } } } })],
  services: [
    "unknown automator type",
    (e) => ({ ...e, provisioner: { actions: { install: { type: "puppet", fields: {} } } } }),
  ],
  clustertemplates: [
    "size.max < size.min",
    (e) => ({ ...e, constraints: { ...e.constraints, size: { min: "4", max: "3" } } }),
  ],
};

test("transfer - an import with one bad entity anywhere is 400 naming it and changes nothing", async (t) => {
  const base = t.context.sys.baseUrl;
  const who = await tenantWithFixture(t, "badimport");
  const before = await exportCatalog(base, who.admin);

  for (const kind of KINDS) {
    const [what, breakIt] = breakers[kind];
    for (const position of ["first", "middle", "last"] as const) {
      const body = fixture();
      // Start from a different catalog than the stored one, so a partial apply would show.
      body.providers = body.providers.map((p) => ({ ...p, description: "replaced" }));
      const list = body[kind];
      const index = position === "first" ? 0 : position === "last" ? list.length - 1 : Math.floor(list.length / 2);
      const victim = list[index];
      list[index] = breakIt(victim);
      const res = await importCatalog(t, who, body);
      const label = `${kind}[${index}] (${what}, ${position})`;
      if (!assertError(t, res, 400, label)) continue;
      t.true(res.body.message.includes(`${kind}[${index}]`), `message names the position: ${res.body.message}`);
      t.true(res.body.message.includes(victim.name), `message names ${victim.name}: ${res.body.message}`);
      t.true(String(res.body.details?.field ?? "").startsWith(`${kind}[${index}]`), `details.field for ${label}`);
    }
  }
  t.deepEqual(await exportCatalog(base, who.admin), before, "catalog unchanged");
});

test("transfer - an import with a broken structure is 400 and changes nothing", async (t) => {
  const base = t.context.sys.baseUrl;
  const who = await tenantWithFixture(t, "badshape");
  const before = await exportCatalog(base, who.admin);
  const full = fixture();
  const bodies: Array<[string, unknown]> = [
    ["a kind that is an object", { ...full, services: { base: full.services[0] } }],
    ["a kind that is a string", { ...full, providers: "aws" }],
    ["an entity that is not an object", { ...full, imagetypes: [...full.imagetypes, "debian13"] }],
    ["an entity that is null", { ...full, hardwaretypes: [null, ...full.hardwaretypes] }],
    ["an entity without a name", { ...full, clustertemplates: [...full.clustertemplates, { description: "x" }] }],
    [
      "a name used twice in one kind",
      { ...full, services: [...full.services, { ...full.services[0], description: "twin" }] },
    ],
    ["a body that is an array", [full]],
    ["a body that is null", null],
    ["a body that is a string", "catalog"],
  ];
  for (const [what, body] of bodies) assertError(t, await importCatalog(t, who, body), 400, what);
  t.deepEqual(await exportCatalog(base, who.admin), before, "catalog unchanged");
});

test("transfer - import replaces the whole catalog: entities not in the body are gone", async (t) => {
  const base = t.context.sys.baseUrl;
  const who = await tenantWithFixture(t, "replace");
  const full = fixture();
  const keptProvider = { ...full.providers[0], description: "changed by the second import" };
  const body = {
    providers: [keptProvider, sample.providers("brand-new")],
    hardwaretypes: [sample.hardwaretypes("only-hardware")],
    services: [],
    clustertemplates: [full.clustertemplates[0]],
    // imagetypes absent: none left afterwards
  };
  assertOk(t, await importCatalog(t, who, body), "second import");
  const expected = canonical({ ...emptyCatalog(), ...body });
  t.deepEqual(await exportCatalog(base, who.admin), expected);
  assertError(t, await api(base, "GET", `/services/${full.services[0].name}`, who.admin), 404, "old service gone");
  assertError(
    t,
    await api(base, "GET", `/imagetypes/${full.imagetypes[0].name}`, who.admin),
    404,
    "old image type gone",
  );
  t.deepEqual((await api(base, "GET", `/providers/${keptProvider.name}`, who.admin)).body, keptProvider);
});

test("transfer - import of {} empties the catalog", async (t) => {
  const base = t.context.sys.baseUrl;
  const who = await tenantWithFixture(t, "empty");
  t.not((await exportCatalog(base, who.admin)).services.length, 0);
  assertOk(t, await importCatalog(t, who, {}), "import {}");
  t.deepEqual(await exportCatalog(base, who.admin), emptyCatalog());
  for (const kind of KINDS) t.deepEqual((await api(base, "GET", `/${kind}`, who.admin)).body, [], kind);
});

test("transfer - import by a non-admin is 403 and changes nothing, export is open to users", async (t) => {
  const base = t.context.sys.baseUrl;
  const who = await tenantWithFixture(t, "nonadmin");
  const before = await exportCatalog(base, who.admin);
  const userExport = await api(base, "GET", "/export", who.user);
  assertOk(t, userExport, "export as an ordinary user");
  t.deepEqual(userExport.body, { ...before, providers: asSeenByUsers(before.providers) }, "the same catalog, secret fields hidden");

  const res = await api(base, "POST", "/import", { ...who.user, body: {} });
  assertError(t, res, 403, "import as an ordinary user");
  const su = await api(base, "POST", "/import", { user: "someone", tenant: "superadmin", body: {} });
  assertError(t, su, 403, "import as an ordinary user of the superadmin tenant");
  t.deepEqual(await exportCatalog(base, who.admin), before, "catalog unchanged");
});

test("transfer - an import changes only the importing tenant", async (t) => {
  const base = t.context.sys.baseUrl;
  const a = await tenantWithFixture(t, "iso-a");
  const b = await tenantWithFixture(t, "iso-b");
  const suBefore = await exportCatalog(base, SUPERADMIN);
  const bBefore = await exportCatalog(base, b.admin);
  assertOk(t, await importCatalog(t, a, { providers: [sample.providers("only-in-a")] }), "import into A");
  t.deepEqual(await exportCatalog(base, a.admin), { ...emptyCatalog(), providers: [sample.providers("only-in-a")] });
  t.deepEqual(await exportCatalog(base, b.admin), bBefore, "B unchanged");
  t.deepEqual(await exportCatalog(base, SUPERADMIN), suBefore, "superadmin unchanged");
});
