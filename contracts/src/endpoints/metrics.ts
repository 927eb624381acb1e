/** Endpoints the metrics service answers: queue metrics and node usage. */
import { Type } from "@sinclair/typebox";
import { subjects } from "../subjects.js";
import { bodyOf, nameField } from "../validation/fields.js";
import { endpointsOf, route } from "./endpoint.js";
import { arrayOf, count, integer, objectOf, recordOf, typedSchema } from "./json-schema.js";
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

/**
 * The node-usage query is read by the metrics service itself, as text: who may ask for which scope is decided
 * before the parameters are checked (405 and 403 before 400; services/metrics/README.md).
 */
const text = (description: string) => Type.Optional(Type.String({ description }));

export const metricEndpoints = {
  "metrics.queues": define.rest({
    subject: m.queues,
    routes: [route("GET", "/metrics/queues")],
    access: "admin",
    denialStatus: 403,
    body: "none",
    reply: typedSchema<Record<string, QueueCounts>>(recordOf(objectOf({ inProgress: count, queued: count, total: count }))),
  }),
  // Who may see what is decided by the metrics service (its 403 and 405 cases: services/metrics/README.md).
  "metrics.nodeUsage": define.get(
    m.nodeUsage,
    "/metrics/nodes/usage",
    "user",
    typedSchema<NodeUsageAnswer>(
      objectOf({ start: integer, end: integer, data: arrayOf(objectOf({ time: integer, value: Type.Number({ minimum: 0 }) })) }),
    ),
    {
      query: Type.Object({
        start: text("Start of the window, whole Unix seconds; absent: the first node creation in scope."),
        end: text("End of the window, whole Unix seconds; absent: now."),
        user: text("Only this user's nodes (an ordinary user may name only itself)."),
        tenant: text("Only this tenant's nodes (the superadmin only; anyone else gets 405)."),
      }),
      errors: {
        403: "An ordinary user asked for another user's usage.",
        405: "A tenant-level query (`tenant`) from a caller that is not the superadmin.",
      },
    },
  ),
};

export const metricsInternalEndpoints = {
  /** Tenant deletion: removes the tenant's node-usage records once every node event of it is recorded. Idempotent. */
  "metrics.purgeTenant": define.internal({
    subject: m.purgeTenant,
    request: bodyOf({ tenant: nameField() }),
    reply: typedSchema<PurgeResult>(objectOf({ removed: count })),
  }),
};
