/**
 * Catalog and tenant helpers for the API tests: unique names, tenants with their callers, sample entities in
 * the canonical form the API stores (so a create answers exactly what was sent), usage records.
 */
import { randomUUID } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { CATALOG_KINDS, buckets, encode, kvKey, type CatalogKind } from "@corral/contracts";
import { openBucket } from "@corral/shared";
import { api, SUPERADMIN, type Caller } from "./api.js";

export const KINDS: readonly CatalogKind[] = CATALOG_KINDS;

/** A name no other test uses: `<prefix>-<8 hex digits>`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** A tenant created for one test, with its tenant admin and an ordinary user. */
export interface TestTenant {
  name: string;
  admin: Caller;
  user: Caller;
}

/** Creates a tenant through the API as the superadmin (workers 0 unless `tenant` says otherwise). */
export async function createTenant(
  baseUrl: string,
  prefix = "tenant",
  options: { tenant?: Record<string, unknown>; bootstrap?: boolean } = {},
): Promise<TestTenant> {
  const name = uniqueName(prefix);
  const body: Record<string, unknown> = { tenant: { name, workers: 0, ...options.tenant } };
  if (options.bootstrap !== undefined) body["bootstrap"] = options.bootstrap;
  const res = await api(baseUrl, "POST", "/tenants", { ...SUPERADMIN, body });
  if (res.status !== 200) throw new Error(`creating tenant ${name} failed: HTTP ${res.status} ${res.text}`);
  return { name, admin: { user: "admin", tenant: name }, user: { user: "someone", tenant: name } };
}

/** Writes a tenant's live usage as the clusters service would (`corral_usage`, msgpack `{clusters, nodes}`). */
export async function setUsage(nc: NatsConnection, tenant: string, usage: { clusters: number; nodes: number }) {
  const kv = await openBucket(nc, buckets.usage);
  await kv.put(kvKey(tenant), encode(usage));
}

/** The export of a caller's tenant; throws unless 200. */
export async function exportCatalog(baseUrl: string, caller: Caller): Promise<Record<CatalogKind, any[]>> {
  const res = await api(baseUrl, "GET", "/export", caller);
  if (res.status !== 200) throw new Error(`export failed: HTTP ${res.status} ${res.text}`);
  return res.body as Record<CatalogKind, any[]>;
}

export function emptyCatalog(): Record<CatalogKind, any[]> {
  return { providers: [], hardwaretypes: [], imagetypes: [], services: [], clustertemplates: [] };
}

/** Provider types and an automator type registered by `registerFixturePluginTypes`. */
export const PROVIDER_TYPE = "aws";
export const OTHER_PROVIDER_TYPE = "gce";
export const AUTOMATOR_TYPE = "chef-solo";

const emptyDependencies = () => ({
  provides: [],
  conflicts: [],
  install: { requires: [], uses: [] },
  runtime: { requires: [], uses: [] },
});

/** One valid entity of each kind, in canonical (stored) form. Needs the test catalog's plugin types registered. */
export const sample: Record<CatalogKind, (name: string) => Record<string, any>> = {
  providers: (name) => ({
    name,
    description: `provider ${name}`,
    providertype: PROVIDER_TYPE,
    provisioner: { region: "eu-west-1", ssh_keypair: "" },
  }),
  hardwaretypes: (name) => ({
    name,
    description: `hardware ${name}`,
    providermap: { "aws-eu-west-1": { flavor: "t3.small", cost: "0.0228" }, "gce-europe": { flavor: "e2-small" } },
  }),
  imagetypes: (name) => ({
    name,
    description: `image ${name}`,
    providermap: { "aws-eu-west-1": { image: "ami-0e8d3a5b2c1f4e6d7" } },
  }),
  services: (name) => ({
    name,
    description: `service ${name}`,
    dependencies: { ...emptyDependencies(), install: { requires: ["base"], uses: [] } },
    provisioner: {
      actions: {
        install: { type: AUTOMATOR_TYPE, fields: { run_list: "recipe[x::install]" } },
        start: { type: AUTOMATOR_TYPE, fields: { run_list: "recipe[x::start]", json_attributes: "{}" } },
      },
    },
  }),
  clustertemplates: (name) => ({
    name,
    description: `template ${name}`,
    compatibility: { hardwaretypes: ["small"], imagetypes: ["debian12"], services: ["base", "web"] },
    defaults: {
      services: ["base"],
      provider: "aws-eu-west-1",
      config: { web: { port: 8080, hosts: "%host.service.web%" } },
      hardwaretype: "small",
      imagetype: "debian12",
    },
    constraints: { size: { min: 1, max: 10 } },
    administration: { leaseduration: { initial: 3600000, max: 86400000, step: 3600000 } },
  }),
};

/** A different valid version of `sample[kind](name)`, for PUT. */
export const changed: Record<CatalogKind, (name: string) => Record<string, any>> = {
  providers: (name) => ({
    name,
    description: `changed ${name}`,
    providertype: OTHER_PROVIDER_TYPE,
    provisioner: { project_id: "corral-example", zone: "europe-west1-b" },
  }),
  hardwaretypes: (name) => ({
    name,
    description: `changed ${name}`,
    providermap: { "gce-europe": { flavor: "e2-medium" } },
  }),
  imagetypes: (name) => ({
    name,
    description: `changed ${name}`,
    providermap: { "gce-europe": { image: "projects/debian-cloud/global/images/family/debian-12" } },
  }),
  services: (name) => ({
    name,
    description: `changed ${name}`,
    dependencies: { ...emptyDependencies(), conflicts: ["other"] },
    provisioner: { actions: { configure: { type: "shell", fields: { script: "configure.sh", args: "-v" } } } },
  }),
  clustertemplates: (name) => ({
    name,
    description: `changed ${name}`,
    compatibility: { hardwaretypes: [], imagetypes: [], services: ["base"] },
    defaults: { services: ["base"], provider: "gce-europe", config: {} },
    constraints: { size: { min: 2 } },
  }),
};
