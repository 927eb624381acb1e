import {
  CATALOG_KINDS,
  parseCatalogSnapshot,
  subjects,
  type ApiRequest,
  type CatalogSnapshot,
  type Handler,
} from "@corral/shared";
import type { CatalogStore } from "../adapters/catalog-store.js";
import type { RegistryStore } from "../adapters/registry-store.js";
import type { CatalogReplacer } from "../catalog-replacer.js";
import { loadValidationContext } from "../validation-context.js";

/** The tenant's whole catalog, each list sorted by name (spec 4.10). */
export async function exportCatalog(catalog: CatalogStore, tenant: string): Promise<CatalogSnapshot> {
  const lists = await Promise.all(CATALOG_KINDS.map((kind) => catalog.list(tenant, kind)));
  return Object.fromEntries(CATALOG_KINDS.map((kind, i) => [kind, lists[i]])) as CatalogSnapshot;
}

export interface TransferHandlerDeps {
  catalog: CatalogStore;
  registry: RegistryStore;
  replacer: CatalogReplacer;
}

export function transferHandlers(deps: TransferHandlerDeps): Record<string, Handler> {
  const { catalog, registry, replacer } = deps;
  const s = subjects.tenancy;
  return {
    [s.export]: (req: ApiRequest) => exportCatalog(catalog, req.identity.tenant),
    [s.snapshot]: (req: { tenant: string }) => exportCatalog(catalog, req.tenant),
    [s.import]: async (req: ApiRequest) => {
      const snapshot = parseCatalogSnapshot(req.body, await loadValidationContext(registry));
      await replacer.replace(req.identity.tenant, snapshot);
      return undefined;
    },
  };
}
