import type { NatsConnection } from "@nats-io/transport-node";
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  SUPERADMIN_TENANT,
  call,
  parseName,
  parseTenantWrite,
  subjects,
  type ApiRequest,
  type Handler,
  type Logger,
  type Tenant,
} from "@corral/shared";
import type { CatalogStore } from "../adapters/catalog-store.js";
import type { TenantStore } from "../adapters/tenant-store.js";
import type { UsageStore } from "../adapters/usage-store.js";
import type { CatalogReplacer } from "../catalog-replacer.js";
import { emptySnapshot } from "../domain/catalog-replacement.js";
import { exportCatalog } from "./transfer.js";

export interface TenantHandlerDeps {
  tenants: TenantStore;
  catalog: CatalogStore;
  usage: UsageStore;
  replacer: CatalogReplacer;
  /** For calls to other services (bootstrap copies plugin resources through the plugins service). */
  nc: NatsConnection;
  log: Logger;
}

/** Copying a tenant's plugin resources copies their bytes; give it longer than an ordinary call. */
const PLUGIN_COPY_TIMEOUT_MS = 120_000;

const byName = (a: Tenant, b: Tenant) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Refuses quotas below what the tenant already uses (spec 4.1, 8). */
function checkQuotas(tenant: Tenant, used: { clusters: number; nodes: number }): void {
  if (tenant.maxClusters !== undefined && tenant.maxClusters < used.clusters) {
    throw new ConflictError(
      `maxClusters ${tenant.maxClusters} is below the ${used.clusters} clusters tenant ${tenant.name} has`,
      { field: "maxClusters" },
      "quota_violation",
    );
  }
  if (tenant.maxNodes !== undefined && tenant.maxNodes < used.nodes) {
    throw new ConflictError(
      `maxNodes ${tenant.maxNodes} is below the ${used.nodes} nodes tenant ${tenant.name} has`,
      { field: "maxNodes" },
      "quota_violation",
    );
  }
}

export function tenantHandlers(deps: TenantHandlerDeps): Record<string, Handler> {
  const { tenants, catalog, usage, replacer, log } = deps;
  /**
   * Best effort: a deleted tenant's plugin resources must not reach a new tenant of the same name. What this
   * misses (no plugins service up) the plugins service's janitor removes later.
   */
  const purgePluginResources = (tenant: string) =>
    call(deps.nc, subjects.plugins.purgeTenant, { tenant }).catch((err: unknown) =>
      log.warn("could not purge the plugin resources of a tenant; the plugins service's sweep will", { tenant, err }),
    );
  const s = subjects.tenancy.tenants;
  return {
    [s.list]: async () => (await tenants.list()).map((r) => r.tenant).sort(byName),

    [s.get]: async (req: ApiRequest) => {
      const name = parseName(req.params["id"], "id");
      const found = await tenants.get(name);
      if (!found) throw new NotFoundError("tenant", name);
      return found.value.tenant;
    },

    [s.create]: async (req: ApiRequest) => {
      const { tenant, bootstrap } = parseTenantWrite(req.body);
      const exists = () => new ConflictError(`tenant ${tenant.name} already exists`, { field: "name" }, "already_exists");
      const snapshot = bootstrap ? await exportCatalog(catalog, SUPERADMIN_TENANT) : emptySnapshot();
      if (bootstrap) {
        // Spec 4.1: bootstrap also copies plugin resources. Done before the tenant exists: the copy replaces whatever
        // the name holds and is idempotent, so when it fails no tenant is left behind and the request can be retried.
        if (await tenants.get(tenant.name)) throw exists();
        await call(deps.nc, subjects.plugins.copyTenant, { from: SUPERADMIN_TENANT, to: tenant.name }, {
          timeoutMs: PLUGIN_COPY_TIMEOUT_MS,
        });
      }
      const pending = replacer.newPending(snapshot);
      if (!bootstrap) {
        if (await tenants.get(tenant.name)) throw exists();
        await purgePluginResources(tenant.name);
      }
      if (!(await tenants.create({ tenant, pendingCatalog: pending }))) throw exists();
      // Also clears whatever a previously deleted tenant of this name may have left behind.
      await replacer.finish(tenant.name, pending);
      return tenant;
    },

    [s.update]: async (req: ApiRequest) => {
      const name = parseName(req.params["id"], "id");
      const { tenant } = parseTenantWrite(req.body);
      if (tenant.name !== name) {
        throw new BadRequestError(`tenant name in body (${tenant.name}) does not match name in path (${name})`, {
          field: "tenant.name",
        });
      }
      const used = await usage.get(name);
      await tenants.modify(name, (current) => {
        if (!current) throw new NotFoundError("tenant", name);
        checkQuotas(tenant, used);
        return { put: { ...current.value, tenant } };
      });
      return tenant;
    },

    [s.delete]: async (req: ApiRequest) => {
      const name = parseName(req.params["id"], "id");
      if (name === SUPERADMIN_TENANT) throw new ForbiddenError("the superadmin tenant cannot be deleted");
      const found = await tenants.get(name);
      if (!found) throw new NotFoundError("tenant", name);
      if (found.value.tenant.workers > 0) {
        throw new ConflictError(
          `tenant ${name} still has ${found.value.tenant.workers} workers; set workers to 0 before deleting it`,
          undefined,
          "not_deletable",
        );
      }
      if (!(await tenants.remove(name, found.revision))) {
        throw new ConflictError(`tenant ${name} changed while being deleted, try again`);
      }
      // If this dies half-way, creating the name again clears the rest (tenant create replaces the catalog).
      await replacer.purge(name);
      await purgePluginResources(name);
      return undefined;
    },
  };
}
