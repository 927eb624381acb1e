import {
  CATALOG_KINDS,
  parseCatalogSnapshot,
  type CatalogSnapshot,
  type Provider,
} from "@corral/contracts";
import type { EndpointHandlers } from "@corral/shared";
import type { CatalogStore } from "../adapters/catalog-store.js";
import type { RegistryStore } from "../adapters/registry-store.js";
import type { CatalogReplacer } from "../catalog-replacer.js";
import { providersSeenBy, withStoredSecrets } from "../provider-secrets.js";
import { loadValidationContext } from "../validation-context.js";

/** The tenant's whole catalog, each list sorted by name. */
export async function exportCatalog(catalog: CatalogStore, tenant: string): Promise<CatalogSnapshot> {
  const lists = await Promise.all(CATALOG_KINDS.map((kind) => catalog.list(tenant, kind)));
  return Object.fromEntries(CATALOG_KINDS.map((kind, i) => [kind, lists[i]])) as CatalogSnapshot;
}

export interface TransferHandlerDeps {
  catalog: CatalogStore;
  registry: RegistryStore;
  replacer: CatalogReplacer;
}

export function transferHandlers(deps: TransferHandlerDeps) {
  const { catalog, registry, replacer } = deps;
  return {
    "tenancy.export": async (req) => {
      const snapshot = await exportCatalog(catalog, req.identity.tenant);
      return { ...snapshot, providers: await providersSeenBy(req.identity, snapshot.providers, registry) };
    },
    // Internal (clusters, bootstrap): never redacted.
    "tenancy.snapshot": (req) => exportCatalog(catalog, req.tenant),
    "tenancy.import": async (req) => {
      const ctx = await loadValidationContext(registry);
      const parsed = parseCatalogSnapshot(req.body, ctx);
      // An export read redacted and imported back keeps the stored secrets of providers of the same name.
      const stored = new Map(((await catalog.list(req.identity.tenant, "providers")) as Provider[]).map((p) => [p.name, p]));
      // Validated above: `providers` is absent or an array of objects with names.
      const given = (req.body as { providers?: Array<{ name: unknown }> }).providers ?? [];
      const at = (name: string) => `providers[${given.findIndex((p) => p.name === name)}].`;
      const providers = parsed.providers.map((p) => withStoredSecrets(p, stored.get(p.name), ctx.providerSpecs, at(p.name)));
      await replacer.replace(req.identity.tenant, { ...parsed, providers });
    },
  } satisfies EndpointHandlers<"tenancy">;
}
