import type { NatsConnection } from "@nats-io/transport-node";
import { SUPERADMIN_TENANT } from "@corral/contracts";
import { callEndpoint, openTenantReader, type Logger } from "@corral/shared";
import type { ResourceStore } from "./adapters/resource-store.js";

/** How often resources of tenants that no longer exist are looked for. */
const SWEEP_MS = 5 * 60_000;

export interface TenantJanitor {
  /** Looks once, now (also runs at start and every five minutes); answers the tenants purged. */
  sweep(): Promise<string[]>;
  stop(): void;
}

/**
 * Tenancy asks for a tenant's resources to be purged when it deletes the tenant; this catches what that missed
 * (no plugins instance was up at the time): resources whose tenant did not exist in two sweeps in a row are
 * purged. Two, because a bootstrapped tenant gets its resources copied just before its record is written.
 */
export async function startTenantJanitor(deps: { nc: NatsConnection; resources: ResourceStore; log: Logger }): Promise<TenantJanitor> {
  const tenants = await openTenantReader(deps.nc);
  let running: Promise<string[]> | undefined;
  /** Tenants with resources but no record at the last sweep. */
  let suspects = new Set<string>();
  const sweep = () => {
    running ??= (async () => {
      const purged: string[] = [];
      const missing = new Set<string>();
      for (const tenant of await deps.resources.tenants()) {
        if (tenant === SUPERADMIN_TENANT || (await tenants.record(tenant))) continue;
        missing.add(tenant);
        if (!suspects.has(tenant)) continue;
        await callEndpoint(deps.nc, "plugins.purgeTenant", { tenant });
        purged.push(tenant);
      }
      suspects = missing;
      if (purged.length > 0) deps.log.info("purged plugin resources of deleted tenants", { tenants: purged });
      return purged;
    })().finally(() => (running = undefined));
    return running;
  };
  const background = () => void sweep().catch((err: unknown) => deps.log.warn("tenant resource sweep failed", { err }));
  const timer = setInterval(background, SWEEP_MS);
  timer.unref();
  background();
  return {
    sweep,
    stop() {
      clearInterval(timer);
    },
  };
}
