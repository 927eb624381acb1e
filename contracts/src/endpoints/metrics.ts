/** Endpoints the metrics service answers: queue metrics and node usage. */
import { Type, type Static } from "@sinclair/typebox";
import { subjects } from "../subjects.js";
import { bodyOf, nameField } from "../validation/fields.js";
import { endpointsOf, route } from "./endpoint.js";
import { arrayOf, count, integer, objectOf, recordOf } from "./json-schema.js";
import { purgeResultSchema } from "./plugins.js";

/** Tasks of one tenant: in progress (delivered, not acked), queued (not yet delivered), total. */
const queueCountsSchema = objectOf({ inProgress: count, queued: count, total: count });
export type QueueCounts = Static<typeof queueCountsSchema>;

/** What `GET /metrics/nodes/usage` answers: node-seconds in the window. */
const nodeUsageSchema = objectOf({
  start: Type.Integer({ description: "Unix seconds." }),
  end: Type.Integer({ description: "Unix seconds." }),
  data: arrayOf(objectOf({ time: integer, value: Type.Number({ minimum: 0 }) })),
});
export type NodeUsageAnswer = Static<typeof nodeUsageSchema>;

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
    reply: recordOf(queueCountsSchema),
  }),
  // Who may see what is decided by the metrics service (its 403 and 405 cases: services/metrics/README.md).
  "metrics.nodeUsage": define.get(
    m.nodeUsage,
    "/metrics/nodes/usage",
    "user",
    nodeUsageSchema,
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
    reply: purgeResultSchema,
  }),
};
