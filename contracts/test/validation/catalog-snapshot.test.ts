import test from "ava";
import type { CatalogKind } from "../../src/entities.js";
import {
  parseCatalogSnapshot,
  parseClusterTemplate,
  parseMachineType,
  parseProvider,
  parseService,
} from "../../src/validation/index.js";
import { CATALOG_CONTEXT, clone, fixtures, throws400 } from "./helpers.js";

const FOLDERS: readonly CatalogKind[] = ["providers", "hardwaretypes", "imagetypes", "services", "clustertemplates"];

/** The whole test catalog as an import body, in file order. */
function fixtureSnapshot(): Record<CatalogKind, unknown[]> {
  const body = {} as Record<CatalogKind, unknown[]>;
  for (const kind of FOLDERS) body[kind] = fixtures(kind).map((f) => f.body);
  return body;
}

test("fixtures - every provider parses", (t) => {
  for (const { file, body } of fixtures("providers")) t.notThrows(() => parseProvider(body, CATALOG_CONTEXT), file);
});

test("fixtures - every hardware type and image type parses", (t) => {
  for (const { file, body } of [...fixtures("hardwaretypes"), ...fixtures("imagetypes")])
    t.notThrows(() => parseMachineType(body), file);
});

test("fixtures - every service parses with the chef-solo and shell specs", (t) => {
  for (const { file, body } of fixtures("services")) t.notThrows(() => parseService(body, CATALOG_CONTEXT), file);
});

test("fixtures - every cluster template parses", (t) => {
  for (const { file, body } of fixtures("clustertemplates")) t.notThrows(() => parseClusterTemplate(body), file);
});

/** The cluster template file `name`.json of the test catalog, as written. */
const templateFile = (name: string): unknown =>
  fixtures("clustertemplates").find((f) => f.file === `${name}.json`)?.body;

test("fixtures - k8s-distributed's string numbers become integers", (t) => {
  const template = parseClusterTemplate(templateFile("k8s-distributed"));
  t.deepEqual(template.constraints?.size, { min: 3 });
  const services = template.constraints?.services ?? {};
  t.deepEqual(services["etcd"], {
    hardwaretypes: ["medium", "large", "xlarge"],
    imagetypes: ["debian12", "ubuntu24"],
    quantities: { min: 1, max: 1 },
  });
  t.deepEqual(services["kube-apiserver"], { quantities: { min: 1, max: 1 } });
  t.deepEqual(services["kube-controller-manager"], { quantities: { min: 1, max: 1 } });
  t.deepEqual(services["kube-scheduler"], { quantities: { min: 1, max: 1 } });
  t.deepEqual(services["kubelet"], { hardwaretypes: ["medium", "large", "xlarge"], quantities: { min: 2 } });
  t.deepEqual(services["grafana"], { quantities: { max: 1 } });
  for (const [name, constraint] of Object.entries(services)) {
    for (const v of Object.values(constraint.quantities ?? {})) t.true(Number.isInteger(v), name);
  }
  t.deepEqual(template.administration, { leaseduration: { initial: 0, max: 0, step: 0 } });
  t.deepEqual(template.constraints?.layout?.cantcoexist?.[0], ["kube-apiserver", "kubelet"]);
});

test("fixtures - webapp's numeric strings and k8s-single's durations become integers", (t) => {
  const webapp = parseClusterTemplate(templateFile("webapp"));
  t.deepEqual(webapp.administration, { leaseduration: { initial: 0, max: 0, step: 0 } });
  t.deepEqual(webapp.constraints?.services?.["postgresql"], { quantities: { max: 1 } });
  const single = parseClusterTemplate(templateFile("k8s-single"));
  t.deepEqual(single.constraints?.size, { min: 1, max: 1 });
  t.deepEqual(single.administration, { leaseduration: { initial: 28_800_000, max: 604_800_000, step: 14_400_000 } });
});

test("snapshot - the full test catalog parses, each list sorted by name", (t) => {
  const body = fixtureSnapshot();
  const snapshot = parseCatalogSnapshot({ ...body, partialtemplates: [{ name: "ignored" }] }, CATALOG_CONTEXT);
  t.deepEqual(Object.keys(snapshot), ["providers", "hardwaretypes", "imagetypes", "services", "clustertemplates"]);
  for (const kind of FOLDERS) {
    const names = snapshot[kind].map((e) => e.name);
    t.is(names.length, body[kind].length, kind);
    t.deepEqual(names, [...names].sort(), kind);
  }
  t.is(snapshot.services.length, 29);
  t.deepEqual(snapshot.clustertemplates[0]?.name, "base");
  t.deepEqual(snapshot.hardwaretypes.map((h) => h.name), ["large", "medium", "small", "xlarge"]);
});

test("snapshot - entities are the same as parsed one by one", (t) => {
  const body = fixtureSnapshot();
  const snapshot = parseCatalogSnapshot(body, CATALOG_CONTEXT);
  const webapp = body.clustertemplates.find((b) => (b as { name: string }).name === "webapp");
  t.deepEqual(
    snapshot.clustertemplates.find((c) => c.name === "webapp"),
    parseClusterTemplate(webapp),
  );
});

test("snapshot - missing kinds are empty lists", (t) => {
  t.deepEqual(parseCatalogSnapshot({}, CATALOG_CONTEXT), {
    providers: [],
    hardwaretypes: [],
    imagetypes: [],
    services: [],
    clustertemplates: [],
  });
  t.deepEqual(parseCatalogSnapshot({ services: null }, CATALOG_CONTEXT).services, []);
});

test("snapshot - shape errors", (t) => {
  throws400(t, () => parseCatalogSnapshot([], CATALOG_CONTEXT), "body must be a JSON object", "body");
  throws400(
    t,
    () => parseCatalogSnapshot({ services: {} }, CATALOG_CONTEXT),
    "services must be an array (got an object)",
    "services",
  );
  throws400(
    t,
    () => parseCatalogSnapshot({ providers: ["aws"] }, CATALOG_CONTEXT),
    `providers[0] must be a JSON object (got "aws")`,
    "providers[0]",
  );
});

test("snapshot - the first entity error names its location and name", (t) => {
  const body = fixtureSnapshot();
  const services = clone(body.services) as { name: string; provisioner: { actions: Record<string, unknown> } }[];
  const broken = services[3];
  if (broken === undefined) return t.fail("the test catalog has too few services");
  broken.provisioner.actions["install"] = { type: "chef-solo", fields: {} };
  const later = services[5];
  if (later !== undefined) later.name = "bad name";
  throws400(
    t,
    () => parseCatalogSnapshot({ ...body, services }, CATALOG_CONTEXT),
    `services[3] (name "${broken.name}"): provisioner.actions.install.fields: run_list is required by automator type chef-solo`,
    "services[3].provisioner.actions.install.fields",
  );
});

test("snapshot - an entity without a usable name is located by index only", (t) => {
  throws400(
    t,
    () => parseCatalogSnapshot({ hardwaretypes: [{ providermap: {} }] }, CATALOG_CONTEXT),
    "hardwaretypes[0]: name is required",
    "hardwaretypes[0].name",
  );
  throws400(
    t,
    () => parseCatalogSnapshot({ imagetypes: [{ name: "a b", providermap: {} }] }, CATALOG_CONTEXT),
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
    () => parseCatalogSnapshot(body, CATALOG_CONTEXT),
    `providers[0] (name "p"): providertype vsphere is not a known provider plugin type`,
    "providers[0].providertype",
  );
});

test("snapshot - duplicate names within a kind are refused", (t) => {
  const type = { name: "small", providermap: {} };
  throws400(
    t,
    () => parseCatalogSnapshot({ hardwaretypes: [type, { name: "large", providermap: {} }, type] }, CATALOG_CONTEXT),
    `hardwaretypes[2] (name "small"): name is a duplicate of hardwaretypes[0]`,
    "hardwaretypes[2].name",
  );
  t.notThrows(() => parseCatalogSnapshot({ hardwaretypes: [type], imagetypes: [type] }, CATALOG_CONTEXT));
});

test("snapshot - errors other than 400 pass through unchanged", (t) => {
  const boom = new Error("registry down");
  const ctx = {
    ...CATALOG_CONTEXT,
    isProviderType: (): boolean => {
      throw boom;
    },
  };
  const err = t.throws(() => parseCatalogSnapshot({ providers: [{ name: "p", providertype: "aws" }] }, ctx));
  t.is(err, boom);
});
