import type { NatsConnection } from "@nats-io/transport-node";
import { SUPERADMIN_TENANT } from "@corral/contracts";
import { openTenantCache, sleep, type Logger } from "@corral/shared";
import { tenantUidOf } from "@corral/auth/internal";

/**
 * Answers "does this tenant exist, and which uid has it?" from tenancy's watched tenant cache, falling back to a
 * fresh read on a miss. A tenant being deleted does not exist.
 */
export interface TenantDirectory {
  /**
   * Whether the directory can tell tenants apart yet: the superadmin tenant, which tenancy creates at its first
   * start, is in the bucket. Before that every tenant would look unknown (a wrong 401), so requests wait.
   */
  ready(): boolean;
  exists(tenant: string): Promise<boolean>;
  /** The tenant's uid as cached ("" for a record without one); undefined when it does not exist or is not cached. */
  cachedUidOf(tenant: string): string | undefined;
  /** The tenant's uid read from the bucket now (the watch lags a write by a moment); undefined when it does not exist. */
  freshUidOf(tenant: string): Promise<string | undefined>;
  stop(): void;
}

/** How often a directory that is not ready reads the superadmin tenant; the watch usually makes it ready sooner. */
const READY_POLL_MS = 250;
/** After this long without the superadmin tenant the gateway logs that it still waits (tenancy not running?). */
const READY_WARN_MS = 10_000;

export async function openTenantDirectory(nc: NatsConnection, log: Logger): Promise<TenantDirectory> {
  const tenants = await openTenantCache(nc, log);
  const freshUidOf = async (tenant: string) => {
    const head = await tenants.fresh(tenant);
    return head ? tenantUidOf(head) : undefined;
  };
  const cachedUidOf = (tenant: string) => {
    const head = tenants.cached(tenant);
    return head ? tenantUidOf(head) : undefined;
  };
  const stopping = new AbortController();
  let superadminSeen = (await freshUidOf(SUPERADMIN_TENANT).catch(() => undefined)) !== undefined;
  const ready = () => (superadminSeen ||= cachedUidOf(SUPERADMIN_TENANT) !== undefined);
  if (!ready()) void waitForSuperadmin();

  /** Reads the superadmin tenant until it is there: the watch alone would miss it if the bucket lost its watcher. */
  async function waitForSuperadmin(): Promise<void> {
    const since = Date.now();
    let warned = false;
    while (!ready() && (await sleep(READY_POLL_MS, stopping.signal))) {
      if (ready()) break;
      if ((await freshUidOf(SUPERADMIN_TENANT).catch(() => undefined)) !== undefined) superadminSeen = true;
      if (!warned && !superadminSeen && Date.now() - since > READY_WARN_MS) {
        warned = true;
        log.warn("the superadmin tenant is not in the tenants bucket yet: answering 503 until the tenancy service has created it");
      }
    }
    if (superadminSeen && warned) log.info("the superadmin tenant is there: serving requests");
  }

  return {
    ready,
    async exists(tenant) {
      return cachedUidOf(tenant) !== undefined || (await freshUidOf(tenant)) !== undefined;
    },
    cachedUidOf,
    freshUidOf,
    stop: () => {
      stopping.abort();
      tenants.stop();
    },
  };
}
