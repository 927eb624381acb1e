import { BadRequestError, SUPERADMIN_TENANT, getOwn, parseName, requireObject } from "@corral/contracts";
import type { EndpointHandlers } from "@corral/shared";
import type { TenantMessages } from "../adapters/tenant-messages.js";
import { purgeTenant } from "../engine/purge-tenant.js";
import type { HandlerDeps } from "./context.js";

/** Internal, called by tenancy while it deletes a tenant: `{tenant}` -> `{done, removed}`. */
export function tenantPurgeHandlers(h: HandlerDeps, messages: TenantMessages) {
  return {
    "clusters.purgeTenant": async (body: unknown) => {
      const tenant = parseName(getOwn(requireObject(body, ""), "tenant"), "tenant");
      if (tenant === SUPERADMIN_TENANT) throw new BadRequestError("the superadmin tenant is never purged");
      return purgeTenant(h.deps, messages, tenant);
    },
  } satisfies EndpointHandlers<"clusters">;
}
