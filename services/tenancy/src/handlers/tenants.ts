import { randomUUID } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  BadRequestError,
  ConflictError,
  NotFoundError,
  SUPERADMIN_TENANT,
  liveTenantRecord,
  type Tenant,
} from "@corral/contracts";
import { callEndpoint, type EndpointHandlers, type Logger } from "@corral/shared";
import type { CatalogStore } from "../adapters/catalog-store.js";
import type { TenantStore } from "../adapters/tenant-store.js";
import type { UsageReader as UsageStore } from "@corral/clusters/readers";
import type { CatalogReplacer } from "../catalog-replacer.js";
import { emptySnapshot } from "../domain/catalog-replacement.js";
import type { TenantDeletions } from "../tenant-deletion.js";
import { exportCatalog } from "./transfer.js";

export interface TenantHandlerDeps {
  tenants: TenantStore;
  catalog: CatalogStore;
  usage: UsageStore;
  replacer: CatalogReplacer;
  deletions: TenantDeletions;
  /** For calls to other services (bootstrap copies plugin resources through the plugins service). */
  nc: NatsConnection;
  log: Logger;
}

/** Copying a tenant's plugin resources copies their bytes; give it longer than an ordinary call. */
const PLUGIN_COPY_TIMEOUT_MS = 120_000;

const byName = (a: Tenant, b: Tenant) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Refuses quotas below what the tenant already uses. */
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

export function tenantHandlers(deps: TenantHandlerDeps) {
  const { tenants, catalog, usage, replacer, deletions, log } = deps;
  /** Best effort: clears plugin resources a tenant of this name may have got without ever being created (a failed bootstrap). */
  const purgePluginResources = (tenant: string) =>
    callEndpoint(deps.nc, "plugins.purgeTenant", { tenant }).catch((err: unknown) =>
      log.warn("could not purge the plugin resources of a tenant; the plugins service's sweep will", { tenant, err }),
    );
  return {
    "tenancy.tenants.list": async () =>
      (await tenants.list())
        .filter((r) => liveTenantRecord(r))
        .map((r) => r.tenant)
        .sort(byName),

    "tenancy.tenants.get": async (req) => {
      const name = req.params.id;
      const found = liveTenantRecord((await tenants.get(name))?.value);
      if (!found) throw new NotFoundError("tenant", name);
      return found.tenant;
    },

    "tenancy.tenants.create": async (req) => {
      const { tenant, bootstrap = false } = req.body;
      const exists = () => new ConflictError(`tenant ${tenant.name} already exists`, { field: "name" }, "already_exists");
      /** The name's previous tenant, if it is still being deleted, is finished first (or this is a 409). */
      const ensureFree = async () => {
        const found = await tenants.get(tenant.name);
        if (found?.value.deleting) await deletions.clear(tenant.name);
        else if (found) throw exists();
      };
      const snapshot = bootstrap ? await exportCatalog(catalog, SUPERADMIN_TENANT) : emptySnapshot();
      if (bootstrap) {
        // Bootstrap also copies plugin resources. Done before the tenant exists: the copy replaces whatever
        // the name holds and is idempotent, so when it fails no tenant is left behind and the request can be retried.
        await ensureFree();
        await callEndpoint(deps.nc, "plugins.copyTenant", { from: SUPERADMIN_TENANT, to: tenant.name }, {
          timeoutMs: PLUGIN_COPY_TIMEOUT_MS,
        });
      }
      const pending = replacer.newPending(snapshot);
      if (!bootstrap) {
        await ensureFree();
        await purgePluginResources(tenant.name);
      }
      if (!(await tenants.create({ tenant, uid: randomUUID(), pendingCatalog: pending }))) throw exists();
      // Also clears whatever a previously deleted tenant of this name may have left behind.
      await replacer.finish(tenant.name, pending);
      return tenant;
    },

    "tenancy.tenants.update": async (req) => {
      const name = req.params.id;
      const { tenant } = req.body;
      if (tenant.name !== name) {
        throw new BadRequestError(`tenant name in body (${tenant.name}) does not match name in path (${name})`, {
          field: "tenant.name",
        });
      }
      const used = await usage.get(name);
      await tenants.modify(name, (current) => {
        if (!current || current.value.deleting) throw new NotFoundError("tenant", name);
        checkQuotas(tenant, used);
        return { put: { ...current.value, tenant } };
      });
      return tenant;
    },

    "tenancy.tenants.delete": async (req) => {
      await deletions.delete(req.params.id);
    },
  } satisfies EndpointHandlers<"tenancy">;
}
