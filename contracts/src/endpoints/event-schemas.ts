/** JSON Schemas of the cluster events (cluster-events.ts) and of the event WebSocket's messages. */
import { CLUSTER_STATUSES } from "../cluster-actions.js";
import type { ClusterEventType } from "../cluster-events.js";
import { NODE_HEALTH_STATES } from "../node-health.js";
import type { TSchema } from "@sinclair/typebox";
import { boolean, count, either, exactly, integer, objectOf, oneOfValues, string } from "./json-schema.js";

/** An event of one type: the fields every event has, then the type's own. */
const eventOf = (type: ClusterEventType, fields: Record<string, TSchema>, optional: Record<string, TSchema> = {}) =>
  objectOf({ type: oneOfValues([type]), tenant: string, clusterId: string, at: count, ...fields }, { optional });

const status = oneOfValues(CLUSTER_STATUSES);
const taskFields = { planId: string, taskId: string, taskName: string, nodeId: string, service: string, attempt: count };

/** One cluster event, any type. */
export const clusterEventSchema = either(
  eventOf(
    "cluster.status",
    { status, action: string, planId: string, progress: objectOf({ stepstotal: count, stepscompleted: count }) },
    { previous: status },
  ),
  eventOf("lease.changed", { expireTime: count, previousExpireTime: count }),
  eventOf("plan.stage", { planId: string, action: string, stage: count, stages: count, tasks: count }),
  eventOf("plan.progress", { planId: string, stage: count, stepscompleted: count, stepstotal: count }),
  eventOf(
    "plan.finished",
    { planId: string, action: string, outcome: oneOfValues(["succeeded", "failed"]) },
    { failure: objectOf({ taskId: string, taskName: string, message: string }, { optional: { nodeId: string, service: string } }), startedBy: string },
  ),
  eventOf("task.started", taskFields),
  eventOf(
    "task.ended",
    { ...taskFields, ok: boolean, status: integer, startTime: count, durationMs: count, resultAt: count },
    { output: objectOf({}, { optional: { stdout: string, stderr: string } }) },
  ),
  eventOf(
    "node.health",
    { nodeId: string, state: oneOfValues(NODE_HEALTH_STATES), message: string, since: count, checkedAt: count },
    { previous: oneOfValues(NODE_HEALTH_STATES) },
  ),
);

/** What a client sends on the event WebSocket. */
export const eventSocketRequestSchema = objectOf(
  { type: oneOfValues(["subscribe", "unsubscribe"]) },
  { optional: { clusterId: string, tenant: exactly(true), since: count } },
);

/** What the server sends on the event WebSocket. */
export const eventSocketMessageSchema = either(
  objectOf({ type: oneOfValues(["event"]), subscription: string, id: count, event: clusterEventSchema }),
  objectOf({ type: oneOfValues(["subscribed", "unsubscribed"]), subscription: string }),
  objectOf({ type: oneOfValues(["error"]), status: integer, error: string, message: string }, { optional: { subscription: string } }),
);
