import { BadRequestError, SUPERADMIN_TENANT } from "@corral/contracts";
import type { EndpointHandlers } from "@corral/shared";
import type { HandlerDeps } from "./context.js";

/** Internal, called by tenancy while it deletes a tenant: `{tenant}` -> `{done, removed}`. */
export function tenantPurgeHandlers(h: HandlerDeps) {
  return {
    "clusters.purgeTenant": async ({ tenant }) => {
      if (tenant === SUPERADMIN_TENANT) throw new BadRequestError("the superadmin tenant is never purged");
      return h.operations.purgeTenant(tenant);
    },
  } satisfies EndpointHandlers<"clusters">;
}
