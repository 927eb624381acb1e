import { ForbiddenError } from "@corral/contracts";
import type { EndpointHandlers } from "@corral/shared";
import type { QueueStateReader } from "../adapters/queue-state.js";

/** `GET /metrics/queues`: a tenant admin sees its tenant, the superadmin every tenant. */
export function queueHandlers(reader: QueueStateReader) {
  return {
    "metrics.queues": async ({ identity }) => {
      // The gateway already refuses ordinary users; this keeps the rule true for any other caller.
      if (identity.role === "user") throw new ForbiddenError("Forbidden to get queue metrics.");
      const tenants = identity.role === "superadmin" ? await reader.tenants() : [identity.tenant];
      return reader.read(tenants);
    },
  } satisfies EndpointHandlers<"metrics">;
}
