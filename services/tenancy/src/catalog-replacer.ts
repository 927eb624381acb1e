import { randomUUID } from "node:crypto";
import { ConflictError, NotFoundError, type CatalogSnapshot } from "@corral/contracts";
import { mapLimit, type Logger } from "@corral/shared";
import type { CatalogStore } from "./adapters/catalog-store.js";
import type { PendingCatalog, TenantStore } from "./adapters/tenant-store.js";
import { emptySnapshot, planReplacement } from "./domain/catalog-replacement.js";

export interface CatalogReplacerDeps {
  tenants: TenantStore;
  catalog: CatalogStore;
  log: Logger;
  now: () => number;
  /** A pending replacement older than this is taken over by any instance. @default 30000 */
  takeoverAfterMs?: number;
}

/**
 * Replaces a tenant's whole catalog so that a crash at any point is finished later, never half-left:
 * the target snapshot is first recorded on the tenant record (compare-and-set), then applied (idempotent
 * puts and deletes), then the mark is cleared. `reconcile` finishes marks whose writer died.
 */
export interface CatalogReplacer {
  /** Records and applies `snapshot` for an existing tenant; 409 while another replacement runs. */
  replace(tenant: string, snapshot: CatalogSnapshot): Promise<void>;
  /** Applies a mark already written on the tenant record (tenant create), then clears it. */
  finish(tenant: string, pending: PendingCatalog): Promise<void>;
  /** Finishes abandoned replacements of every tenant. */
  reconcile(): Promise<void>;
  newPending(snapshot: CatalogSnapshot): PendingCatalog;
  /** Removes every catalog entity of a tenant whose record is already gone. */
  purge(tenant: string): Promise<void>;
}

const APPLY_CONCURRENCY = 32;

export function createCatalogReplacer(deps: CatalogReplacerDeps): CatalogReplacer {
  const { tenants, catalog, log, now } = deps;
  const takeoverAfterMs = deps.takeoverAfterMs ?? 30000;

  const newPending = (snapshot: CatalogSnapshot): PendingCatalog => ({
    snapshot,
    startedAt: now(),
    token: randomUUID(),
  });

  const apply = async (tenant: string, snapshot: CatalogSnapshot): Promise<void> => {
    const plan = planReplacement(await catalog.names(tenant), snapshot);
    await mapLimit(plan.deletes, APPLY_CONCURRENCY, (d) => catalog.remove(tenant, d.kind, d.name));
    await mapLimit(plan.puts, APPLY_CONCURRENCY, (p) => catalog.put(tenant, p.kind, p.entity));
  };

  const clear = (tenant: string, token: string) =>
    tenants.modify(tenant, (current) => {
      if (!current || current.value.pendingCatalog?.token !== token) return { keep: true };
      const { pendingCatalog: _done, ...rest } = current.value;
      return { put: rest };
    });

  const finish = async (tenant: string, pending: PendingCatalog) => {
    await apply(tenant, pending.snapshot);
    await clear(tenant, pending.token);
  };

  const isStale = (p: PendingCatalog) => now() - p.startedAt >= takeoverAfterMs;

  return {
    newPending,
    finish,
    purge: (tenant) => apply(tenant, emptySnapshot()),
    async replace(tenant, snapshot) {
      const pending = newPending(snapshot);
      await tenants.modify(tenant, (current) => {
        if (!current || current.value.deleting) throw new NotFoundError("tenant", tenant);
        const running = current.value.pendingCatalog;
        if (running && !isStale(running)) {
          throw new ConflictError(`a catalog import for tenant ${tenant} is in progress, try again`);
        }
        return { put: { ...current.value, pendingCatalog: pending } };
      });
      await finish(tenant, pending);
    },
    async reconcile() {
      for (const record of await tenants.list()) {
        const running = record.pendingCatalog;
        if (!running || !isStale(running) || record.deleting) continue;
        const name = record.tenant.name;
        const claim = { ...running, startedAt: now(), token: randomUUID() };
        const claimed = await tenants.modify(name, (current) =>
          current?.value.pendingCatalog?.token === running.token
            ? { put: { ...current.value, pendingCatalog: claim } }
            : { keep: true },
        );
        if (claimed?.pendingCatalog?.token !== claim.token) continue;
        log.info("finishing an interrupted catalog replacement", { tenant: name });
        await finish(name, claim);
      }
    },
  };
}
