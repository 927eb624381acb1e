import { BadRequestError, SUPERADMIN_TENANT, UnavailableError } from "@corral/contracts";
import { redisCall, type EndpointHandlers, type Logger } from "@corral/shared";
import type { EventFeed } from "../adapters/event-feed.js";
import type { UsageStore } from "../adapters/usage-store.js";

/** How long a purge waits for the node events already in the stream to be recorded. */
const CATCH_UP_MS = 10_000;
/** A large tenant's keys take a while to delete; tenancy waits 20 s for the whole step. */
const PURGE_TIMEOUT_MS = 8_000;

/**
 * Internal, called by tenancy while it deletes a tenant (after the clusters service removed the tenant's events
 * from the stream): `{tenant}` -> `{removed}` Redis keys. It first waits until no event of the tenant can still be
 * recorded, or a late one would bring a record back.
 */
export function tenantPurgeHandlers(store: UsageStore, feed: EventFeed, log: Logger) {
  return {
    "metrics.purgeTenant": async ({ tenant }) => {
      if (tenant === SUPERADMIN_TENANT) throw new BadRequestError("the superadmin tenant is never purged");
      if (!(await feed.caughtUp(CATCH_UP_MS))) {
        throw new UnavailableError("node events are not all recorded yet; the tenant's node usage is purged later");
      }
      // Tenancy retries a failed purge step, so a purge during an outage finishes once Redis is back.
      const purge = () => store.purgeTenant(tenant);
      return { removed: await redisCall("the tenant's node usage cannot be purged yet", purge, { log, timeoutMs: PURGE_TIMEOUT_MS }) };
    },
  } satisfies EndpointHandlers<"metrics">;
}
