import test from "ava";
import type { CatalogKind } from "../../src/entities.js";
import {
  parseCatalogSnapshot,
  parseClusterTemplate,
  parseMachineType,
  parseProvider,
  parseService,
} from "../../src/validation/index.js";
import { COOPR_CONTEXT, clone, fixtures, throws400 } from "./helpers.js";

const FOLDERS: readonly CatalogKind[] = ["providers", "hardwaretypes", "imagetypes", "services", "clustertemplates"];

/** The whole fixture catalog as an import body, in file order. */
function fixtureSnapshot(): Record<CatalogKind, unknown[]> {
  const body = {} as Record<CatalogKind, unknown[]>;
  for (const kind of FOLDERS) body[kind] = fixtures(kind).map((f) => f.body);
  return body;
}

test("fixtures - every provider parses", (t) => {
  for (const { file, body } of fixtures("providers")) t.notThrows(() => parseProvider(body, COOPR_CONTEXT), file);
});

test("fixtures - every hardware type and image type parses", (t) => {
  for (const { file, body } of [...fixtures("hardwaretypes"), ...fixtures("imagetypes")])
    t.notThrows(() => parseMachineType(body), file);
});

test("fixtures - every service parses with the chef-solo and shell specs", (t) => {
  for (const { file, body } of fixtures("services")) t.notThrows(() => parseService(body, COOPR_CONTEXT), file);
});

test("fixtures - every cluster template parses", (t) => {
  for (const { file, body } of fixtures("clustertemplates")) t.notThrows(() => parseClusterTemplate(body), file);
});

test("fixtures - hadoop-distributed's string numbers become integers", (t) => {
  const body = fixtures("clustertemplates").find((f) => f.file === "hadoop-distributed.json")?.body;
  const template = parseClusterTemplate(body);
  t.deepEqual(template.constraints?.size, { min: 3 });
  const services = template.constraints?.services ?? {};
  t.deepEqual(services["hadoop-hdfs-namenode"], { quantities: { min: 1, max: 1 } });
  t.deepEqual(services["hbase-master"], { quantities: { min: 1, max: 1 } });
  t.deepEqual(services["mysql-server"], { quantities: { min: 1, max: 1 } });
  t.deepEqual(services["hadoop-hdfs-datanode"], { quantities: { min: 2 } });
  for (const [name, constraint] of Object.entries(services)) {
    for (const v of Object.values(constraint.quantities ?? {})) t.true(Number.isInteger(v), name);
  }
  t.deepEqual(template.administration, { leaseduration: { initial: 0, max: 0, step: 0 } });
  t.deepEqual(template.constraints?.layout?.cantcoexist?.[0], [
    "hadoop-yarn-resourcemanager",
    "hadoop-yarn-nodemanager",
  ]);
});

test("snapshot - the full fixture catalog parses, each list sorted by name", (t) => {
  const body = fixtureSnapshot();
  const snapshot = parseCatalogSnapshot({ ...body, partialtemplates: [{ name: "ignored" }] }, COOPR_CONTEXT);
  t.deepEqual(Object.keys(snapshot), ["providers", "hardwaretypes", "imagetypes", "services", "clustertemplates"]);
  for (const kind of FOLDERS) {
    const names = snapshot[kind].map((e) => e.name);
    t.is(names.length, body[kind].length, kind);
    t.deepEqual(names, [...names].sort(), kind);
  }
  t.is(snapshot.services.length, 25);
  t.deepEqual(snapshot.clustertemplates[0]?.name, "base");
  t.deepEqual(
    snapshot.hardwaretypes.map((h) => h.name),
    ["standard-2xlarge", "standard-large", "standard-medium", "standard-small", "standard-xlarge"],
  );
});

test("snapshot - entities are the same as parsed one by one", (t) => {
  const body = fixtureSnapshot();
  const snapshot = parseCatalogSnapshot(body, COOPR_CONTEXT);
  const lamp = body.clustertemplates.find((b) => (b as { name: string }).name === "lamp");
  t.deepEqual(
    snapshot.clustertemplates.find((c) => c.name === "lamp"),
    parseClusterTemplate(lamp),
  );
});

test("snapshot - missing kinds are empty lists", (t) => {
  t.deepEqual(parseCatalogSnapshot({}, COOPR_CONTEXT), {
    providers: [],
    hardwaretypes: [],
    imagetypes: [],
    services: [],
    clustertemplates: [],
  });
  t.deepEqual(parseCatalogSnapshot({ services: null }, COOPR_CONTEXT).services, []);
});

test("snapshot - shape errors", (t) => {
  throws400(t, () => parseCatalogSnapshot([], COOPR_CONTEXT), "body must be a JSON object", "body");
  throws400(
    t,
    () => parseCatalogSnapshot({ services: {} }, COOPR_CONTEXT),
    "services must be an array (got an object)",
    "services",
  );
  throws400(
    t,
    () => parseCatalogSnapshot({ providers: ["aws"] }, COOPR_CONTEXT),
    `providers[0] must be a JSON object (got "aws")`,
    "providers[0]",
  );
});

test("snapshot - the first entity error names its location and name", (t) => {
  const body = fixtureSnapshot();
  const services = clone(body.services) as { name: string; provisioner: { actions: Record<string, unknown> } }[];
  const broken = services[3];
  if (broken === undefined) return t.fail("fixture has too few services");
  broken.provisioner.actions["install"] = { type: "chef-solo", fields: {} };
  const later = services[5];
  if (later !== undefined) later.name = "bad name";
  throws400(
    t,
    () => parseCatalogSnapshot({ ...body, services }, COOPR_CONTEXT),
    `services[3] (name "${broken.name}"): provisioner.actions.install.fields: run_list is required by automator type chef-solo`,
    "services[3].provisioner.actions.install.fields",
  );
});

test("snapshot - an entity without a usable name is located by index only", (t) => {
  throws400(
    t,
    () => parseCatalogSnapshot({ hardwaretypes: [{ providermap: {} }] }, COOPR_CONTEXT),
    "hardwaretypes[0]: name is required",
    "hardwaretypes[0].name",
  );
  throws400(
    t,
    () => parseCatalogSnapshot({ imagetypes: [{ name: "a b", providermap: {} }] }, COOPR_CONTEXT),
    `imagetypes[0] (name "a b"): name must contain only letters, digits, '.', '_' and '-' (got "a b")`,
    "imagetypes[0].name",
  );
});

test("snapshot - kinds are checked in order: providers before templates", (t) => {
  const body = {
    clustertemplates: [{ name: "t" }],
    providers: [{ name: "p", providertype: "vsphere" }],
  };
  throws400(
    t,
    () => parseCatalogSnapshot(body, COOPR_CONTEXT),
    `providers[0] (name "p"): providertype vsphere is not a known provider plugin type`,
    "providers[0].providertype",
  );
});

test("snapshot - duplicate names within a kind are refused", (t) => {
  const type = { name: "small", providermap: {} };
  throws400(
    t,
    () => parseCatalogSnapshot({ hardwaretypes: [type, { name: "large", providermap: {} }, type] }, COOPR_CONTEXT),
    `hardwaretypes[2] (name "small"): name is a duplicate of hardwaretypes[0]`,
    "hardwaretypes[2].name",
  );
  t.notThrows(() => parseCatalogSnapshot({ hardwaretypes: [type], imagetypes: [type] }, COOPR_CONTEXT));
});

test("snapshot - errors other than 400 pass through unchanged", (t) => {
  const boom = new Error("registry down");
  const ctx = {
    ...COOPR_CONTEXT,
    isProviderType: (): boolean => {
      throw boom;
    },
  };
  const err = t.throws(() => parseCatalogSnapshot({ providers: [{ name: "p", providertype: "aws" }] }, ctx));
  t.is(err, boom);
});
