/**
 * The Coopr fixture catalog (tests and benchmarks only), read in one place.
 *
 * The fixtures live beside the repository (`<repo>/../shared/fixtures/coopr-catalog`, `CORRAL_FIXTURES`
 * overrides), one JSON entity per file. Raw readers give the files as written (untrusted input, e.g. for
 * validation and import tests); `fixtureCatalog()` and the lookups give the canonical stored form, produced by
 * the product's own validator, so product code under test gets what it gets in production. The canonical catalog
 * and the plugin specs are read once and cached; every function returns a fresh copy, so a test may change
 * what it gets without touching other tests.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
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

/** The fixture catalog folder. */
export const FIXTURES_DIR: string =
  process.env["CORRAL_FIXTURES"] ?? fileURLToPath(new URL("../../../shared/fixtures/coopr-catalog", import.meta.url));

/** The provider types the fixture's providers name (for validation contexts and registries that check them). */
export const FIXTURE_PROVIDER_TYPES: readonly string[] = ["aws", "google", "joyent", "openstack", "rackspace"];

/** Fails with what to do when the fixture catalog is not where the tests look. */
function requireFixtures(): void {
  if (existsSync(FIXTURES_DIR)) return;
  throw new Error(
    `the Coopr fixture catalog is missing: tests read it from ${FIXTURES_DIR}. Put the reference material's ` +
      "shared/ folder beside the repository (../shared/fixtures/coopr-catalog) or point CORRAL_FIXTURES at the catalog.",
  );
}

/** One fixture file (path relative to {@link FIXTURES_DIR}) as untrusted JSON, as written. */
export function readFixture<T = unknown>(relative: string): T {
  requireFixtures();
  return JSON.parse(readFileSync(join(FIXTURES_DIR, relative), "utf8")) as T;
}

/** Every `.json` fixture of a folder with its file name, sorted by file name, as written. */
export function readFixtureFiles<T = unknown>(dir: string): { file: string; body: T }[] {
  requireFixtures();
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

/** The fixture's automator type specs (chef-solo, shell), sorted by file name. */
export function fixtureAutomatorSpecs(): PluginSpec[] {
  automators ??= readFixtureDir<PluginSpec>("plugins/automatortypes");
  return structuredClone([...automators]);
}

/** The fixture's provider type specs (aws, google, ...), sorted by file name. */
export function fixtureProviderSpecs(): PluginSpec[] {
  providerTypes ??= readFixtureDir<PluginSpec>("plugins/providertypes");
  return structuredClone([...providerTypes]);
}

/**
 * Providers as an ordinary user sees them once the fixture's provider types are registered: the fields those
 * types mark sensitive or of type password (rackspace's `api_password`, ...) redacted.
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
      isProviderType: () => true,
      automatorType: (name) => specs.find((s) => s.name === name),
    });
  }
  return snapshot;
}

/**
 * The whole fixture catalog in canonical stored form, as `parseCatalogSnapshot` gives it (numeric strings as
 * integers, defaults filled in, each list sorted by name), validated against the fixture's automator types
 * and any provider type.
 */
export const fixtureCatalog = (): CatalogSnapshot => structuredClone(canonical());

export const fixtureProviders = (): Provider[] => structuredClone(canonical().providers);
export const fixtureHardwareTypes = (): HardwareType[] => structuredClone(canonical().hardwaretypes);
export const fixtureImageTypes = (): ImageType[] => structuredClone(canonical().imagetypes);
export const fixtureServices = (): Service[] => structuredClone(canonical().services);
export const fixtureTemplates = (): ClusterTemplate[] => structuredClone(canonical().clustertemplates);

/** The cluster template `name` (canonical form); throws when the fixture has none. */
export function fixtureTemplate(name: string): ClusterTemplate {
  const template = canonical().clustertemplates.find((t) => t.name === name);
  if (template === undefined) throw new Error(`no fixture cluster template "${name}"`);
  return structuredClone(template);
}

/** The catalog as the solvers take it (a `LayoutCatalog`): services, hardware types and image types. */
export function fixtureSolverCatalog(): { services: Service[]; hardwareTypes: HardwareType[]; imageTypes: ImageType[] } {
  return { services: fixtureServices(), hardwareTypes: fixtureHardwareTypes(), imageTypes: fixtureImageTypes() };
}
