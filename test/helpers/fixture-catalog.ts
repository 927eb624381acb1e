/**
 * The test catalog (tests and benchmarks only), read in one place.
 *
 * The catalog lives in the repository at `test/fixtures/catalog` (its README says what each template exercises),
 * one JSON entity per file. Raw readers give the files as written (untrusted input, e.g. for validation and import
 * tests); `fixtureCatalog()` and the lookups give the canonical stored form, produced by the product's own
 * validator, so product code under test gets what it gets in production. The canonical catalog and the plugin
 * specs are read once and cached; every function returns a fresh copy, so a test may change what it gets without
 * touching other tests.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CATALOG_KINDS,
  parseCatalogSnapshot,
  redactProvider,
  sensitiveFieldsOf,
  type CatalogKind,
  type CatalogSnapshot,
  type ClusterTemplate,
  type HardwareType,
  type ImageType,
  type PluginSpec,
  type Provider,
  type Service,
} from "@corral/contracts";

/** The test catalog folder. */
export const FIXTURES_DIR: string = fileURLToPath(new URL("../fixtures/catalog", import.meta.url));

/** The provider types the catalog's providers name (for validation contexts and registries that check them). */
export const FIXTURE_PROVIDER_TYPES: readonly string[] = ["aws", "digitalocean", "gce", "openstack"];

/** One fixture file (path relative to {@link FIXTURES_DIR}) as untrusted JSON, as written. */
export function readFixture<T = unknown>(relative: string): T {
  return JSON.parse(readFileSync(join(FIXTURES_DIR, relative), "utf8")) as T;
}

/** Every `.json` fixture of a folder with its file name, sorted by file name, as written. */
export function readFixtureFiles<T = unknown>(dir: string): { file: string; body: T }[] {
  return readdirSync(join(FIXTURES_DIR, dir))
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => ({ file, body: readFixture<T>(join(dir, file)) }));
}

/** Every `.json` fixture of a folder, sorted by file name, as written. */
export function readFixtureDir<T = any>(dir: string): T[] {
  return readFixtureFiles<T>(dir).map((f) => f.body);
}

/** The five catalog kinds as the files hold them (an import body), each in file order. */
export function rawFixtureCatalog(): Record<CatalogKind, any[]> {
  return Object.fromEntries(CATALOG_KINDS.map((kind) => [kind, readFixtureDir(kind)])) as Record<CatalogKind, any[]>;
}

let automators: readonly PluginSpec[] | undefined;
let providerTypes: readonly PluginSpec[] | undefined;
let snapshot: CatalogSnapshot | undefined;

/** The catalog's automator type specs (chef-solo, shell), sorted by file name. */
export function fixtureAutomatorSpecs(): PluginSpec[] {
  automators ??= readFixtureDir<PluginSpec>("plugins/automatortypes");
  return structuredClone([...automators]);
}

/** The catalog's provider type specs (aws, digitalocean, gce, openstack), sorted by file name. */
export function fixtureProviderSpecs(): PluginSpec[] {
  providerTypes ??= readFixtureDir<PluginSpec>("plugins/providertypes");
  return structuredClone([...providerTypes]);
}

/**
 * Providers as an ordinary user sees them once the catalog's provider types are registered: the fields those
 * types mark sensitive or of type password (aws's `secret_access_key`, gce's `service_account_key`, ...) redacted.
 */
export function asSeenByUsers<P extends Provider>(providers: P[]): P[] {
  const specs = fixtureProviderSpecs();
  return providers.map((p) => redactProvider(p, sensitiveFieldsOf(specs.find((s) => s.name === p.providertype) ?? { name: p.providertype })) as P);
}

/** The canonical catalog, validated once; never handed out without a copy. */
function canonical(): CatalogSnapshot {
  if (snapshot === undefined) {
    const specs = fixtureAutomatorSpecs();
    snapshot = parseCatalogSnapshot(rawFixtureCatalog(), {
      isProviderType: (name) => FIXTURE_PROVIDER_TYPES.includes(name),
      automatorType: (name) => specs.find((s) => s.name === name),
    });
  }
  return snapshot;
}

/**
 * The whole test catalog in canonical stored form, as `parseCatalogSnapshot` gives it (numeric strings as
 * integers, defaults filled in, each list sorted by name), validated against the catalog's automator types
 * and provider types.
 */
export const fixtureCatalog = (): CatalogSnapshot => structuredClone(canonical());

export const fixtureProviders = (): Provider[] => structuredClone(canonical().providers);
export const fixtureHardwareTypes = (): HardwareType[] => structuredClone(canonical().hardwaretypes);
export const fixtureImageTypes = (): ImageType[] => structuredClone(canonical().imagetypes);
export const fixtureServices = (): Service[] => structuredClone(canonical().services);
export const fixtureTemplates = (): ClusterTemplate[] => structuredClone(canonical().clustertemplates);

/** The cluster template `name` (canonical form); throws when the catalog has none. */
export function fixtureTemplate(name: string): ClusterTemplate {
  const template = canonical().clustertemplates.find((t) => t.name === name);
  if (template === undefined) throw new Error(`no cluster template "${name}" in the test catalog`);
  return structuredClone(template);
}

/** The catalog as the solvers take it (a `LayoutCatalog`): services, hardware types and image types. */
export function fixtureSolverCatalog(): { services: Service[]; hardwareTypes: HardwareType[]; imageTypes: ImageType[] } {
  return { services: fixtureServices(), hardwareTypes: fixtureHardwareTypes(), imageTypes: fixtureImageTypes() };
}
