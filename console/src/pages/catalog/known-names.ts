/** The names a form offers (providers for a template's default provider, provider types for a provider, ...). */
import type { CatalogKind } from "@corral/contracts";
import type { Api } from "../../api.js";
import type { KnownNames } from "./entity-form.js";
import type { EntityField, NameSource } from "./kinds.js";

/** `tenancy.catalog.<kind>.list` by kind: the table's names are literal per kind. */
const listEndpoint = {
  providers: "tenancy.catalog.providers.list",
  hardwaretypes: "tenancy.catalog.hardwaretypes.list",
  imagetypes: "tenancy.catalog.imagetypes.list",
  services: "tenancy.catalog.services.list",
  clustertemplates: "tenancy.catalog.clustertemplates.list",
} as const satisfies Record<CatalogKind, string>;

export const listCatalog = (api: Api, kind: CatalogKind) => api.call(listEndpoint[kind]);

async function namesOf(api: Api, source: NameSource): Promise<string[]> {
  const entities = "catalog" in source ? await listCatalog(api, source.catalog) : await api.call("plugins.listTypes", { params: { type: source.plugins } });
  return entities.map((e) => e.name).sort();
}

/** Every name source the fields use, each read once; a source that cannot be read offers nothing. */
export async function knownNames(api: Api, specs: readonly EntityField[]): Promise<KnownNames> {
  const bySource = new Map<string, Promise<string[]>>();
  const pending = specs.flatMap((spec) => {
    if (!spec.names) return [];
    const key = JSON.stringify(spec.names);
    if (!bySource.has(key)) bySource.set(key, namesOf(api, spec.names).catch(() => []));
    return [(bySource.get(key) as Promise<string[]>).then((names) => [spec.path, names] as const)];
  });
  return new Map(await Promise.all(pending));
}
