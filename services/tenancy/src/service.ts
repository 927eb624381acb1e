import { randomUUID } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { CATALOG_KINDS, SUPERADMIN_TENANT } from "@corral/contracts";
import { serveEndpoints, type EndpointHandlers, type Logger, type MetricsRegistry } from "@corral/shared";
import { openUsageReader } from "@corral/clusters/readers";
import { openCatalogStore } from "./adapters/catalog-store.js";
import { openHostPoolStore } from "./adapters/hostpool-store.js";
import { openRegistryStore } from "./adapters/registry-store.js";
import { openTenantStore } from "./adapters/tenant-store.js";
import { startBalancer } from "./balancer/balancer.js";
import { openBalancerStore } from "./balancer/balancer-store.js";
import { createCatalogReplacer } from "./catalog-replacer.js";
import { catalogHandlers } from "./handlers/catalog.js";
import { hostPoolHandlers } from "./handlers/hostpool.js";
import { provisionerHandlers } from "./handlers/provisioners.js";
import { tenantHandlers } from "./handlers/tenants.js";
import { transferHandlers } from "./handlers/transfer.js";
import { createTenantDeletions } from "./tenant-deletion.js";

export interface TenancyServiceDeps {
  nc: NatsConnection;
  log: Logger;
  /** @default Date.now */
  now?: () => number;
  /** How often abandoned catalog replacements and tenant deletions are looked for. @default 15000 */
  reconcileIntervalMs?: number;
  /** Workers of the superadmin tenant when it is first created. @default 0 */
  superadminWorkers?: number;
  /** Age after which another instance finishes an interrupted replacement or tenant deletion. @default 30000 */
  takeoverAfterMs?: number;
  /** Worker balancing (balancer/balancer.ts): round interval and dead-record removal age. @default {} */
  balancer?: { intervalMs?: number; removeDeadAfterMs?: number };
  /** The process's Prometheus metrics (request durations per endpoint). @default none */
  metrics?: MetricsRegistry;
}

export interface TenancyService {
  stop(): Promise<void>;
}

/** Starts the tenancy service: tenants, provisioner registry reads, the per-tenant catalog, export/import. */
export async function startTenancyService(deps: TenancyServiceDeps): Promise<TenancyService> {
  const { nc, log } = deps;
  const now = deps.now ?? Date.now;
  const [tenants, catalog, registry, usage, balancerStore, hostPool] = await Promise.all([
    openTenantStore(nc),
    openCatalogStore(nc, log),
    openRegistryStore(nc),
    openUsageReader(nc),
    openBalancerStore(nc, log),
    openHostPoolStore(nc),
  ]);
  const replacer = createCatalogReplacer({ tenants, catalog, log, now, takeoverAfterMs: deps.takeoverAfterMs });
  const deletions = createTenantDeletions({ tenants, usage, replacer, hostPool, nc, log, now, takeoverAfterMs: deps.takeoverAfterMs });

  // The superadmin tenant exists from the first start; concurrent instances race on create, one wins.
  await tenants.create({
    tenant: { name: SUPERADMIN_TENANT, description: "super admin tenant", workers: deps.superadminWorkers ?? 0 },
    uid: randomUUID(),
  });

  const handlers: EndpointHandlers<"tenancy"> = {
    ...tenantHandlers({ tenants, catalog, usage, replacer, deletions, nc, log }),
    ...provisionerHandlers(registry, now),
    ...transferHandlers({ catalog, registry, replacer }),
    ...CATALOG_KINDS.reduce((all, kind) => ({ ...all, ...catalogHandlers(kind, { catalog, registry }) }), {}),
    ...hostPoolHandlers({ catalog, hostPool }),
  };
  // Every instance balances; compare-and-set on the assignment keeps them from losing each other's writes.
  const balancer = startBalancer({ store: balancerStore, log: log.child({ part: "balancer" }), now, ...deps.balancer });
  const served = serveEndpoints({ nc, service: "tenancy", log, handlers, metrics: deps.metrics });

  const reconcile = () =>
    Promise.all([
      replacer.reconcile().catch((err: unknown) => log.warn("catalog reconcile failed", { err })),
      deletions.sweep().catch((err: unknown) => log.warn("tenant deletion sweep failed", { err })),
    ]);
  void reconcile();
  const timer = setInterval(reconcile, deps.reconcileIntervalMs ?? 15000);
  timer.unref();

  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        clearInterval(timer);
        await balancer.stop();
        balancerStore.stop();
        await served.stop();
        await deletions.stop();
        catalog.stop();
      })();
      return stopping;
    },
  };
}
