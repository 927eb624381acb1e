/** Endpoints the metrics service answers: queue metrics and node usage. */
import { subjects } from "../subjects.js";
import { endpointsOf, route } from "./endpoint.js";
import { arrayOf, count, integer, objectOf, recordOf, string } from "./json-schema.js";
import type { PurgeResult } from "./plugins.js";

/** Tasks of one tenant: in progress (delivered, not acked), queued (not yet delivered), total. */
export interface QueueCounts {
  inProgress: number;
  queued: number;
  total: number;
}

/** What `GET /metrics/nodes/usage` answers: node-seconds in the window. */
export interface NodeUsageAnswer {
  /** Unix seconds. */
  start: number;
  /** Unix seconds. */
  end: number;
  data: Array<{ time: number; value: number }>;
}

const define = endpointsOf("metrics");
const m = subjects.metrics;

export const metricEndpoints = {
  "metrics.queues": define.rest<undefined, Record<string, QueueCounts>>({
    subject: m.queues,
    routes: [route("GET", "/metrics/queues")],
    access: "admin",
    denialStatus: 403,
    body: "none",
    reply: recordOf(objectOf({ inProgress: count, queued: count, total: count })),
  }),
  // Who may see what is decided by the metrics service (its 403 and 405 cases: services/metrics/README.md).
  "metrics.nodeUsage": define.get<NodeUsageAnswer, "start" | "end" | "user" | "tenant">(
    m.nodeUsage,
    "/metrics/nodes/usage",
    "user",
    objectOf({ start: integer, end: integer, data: arrayOf(objectOf({ time: integer, value: { type: "number", minimum: 0 } })) }),
    {
      start: { description: "Start of the window, Unix seconds; absent: the first node creation in scope.", schema: count },
      end: { description: "End of the window, Unix seconds; absent: now.", schema: count },
      user: { description: "Only this user's nodes (an ordinary user may name only itself).", schema: string },
      tenant: { description: "Only this tenant's nodes (the superadmin only; anyone else gets 405).", schema: string },
    },
  ),
};

export const metricsInternalEndpoints = {
  /** Tenant deletion: removes the tenant's node-usage records once every node event of it is recorded. Idempotent. */
  "metrics.purgeTenant": define.internal<{ tenant: string }, PurgeResult>({
    subject: m.purgeTenant,
    request: objectOf({ tenant: string }),
    reply: objectOf({ removed: count }),
  }),
};
