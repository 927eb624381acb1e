import type { AuditEntry, PlanFinishedEvent } from "@corral/contracts";

/**
 * The ends of plans as the audit log records them (docs/api.md, Audit log). Pure: the feed (adapters/plan-end-feed.ts)
 * reads the events and publishes what these answer.
 */

/** Where a plan is read, the route its end is recorded under. */
export const PLAN_ROUTE = "/clusters/:id/plans/:planId";

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const isText = (v: unknown): v is string => typeof v === "string" && v.length > 0;

function asPlanEnd(v: unknown): PlanFinishedEvent | undefined {
  if (!isRecord(v) || v["type"] !== "plan.finished") return undefined;
  if (!isText(v["tenant"]) || !isText(v["clusterId"]) || !isText(v["planId"]) || typeof v["at"] !== "number") return undefined;
  if (v["outcome"] !== "succeeded" && v["outcome"] !== "failed") return undefined;
  return v as unknown as PlanFinishedEvent;
}

/**
 * The plan ends one stored cluster event holds: itself when it is one, those riding inside a `plan.progress`
 * (`then`); none for anything else.
 */
export function planEndsIn(stored: unknown): PlanFinishedEvent[] {
  const alone = asPlanEnd(stored);
  if (alone) return [alone];
  if (!isRecord(stored) || stored["type"] !== "plan.progress" || !Array.isArray(stored["then"])) return [];
  return stored["then"].flatMap((e) => asPlanEnd(e) ?? []);
}

/** Where the failed task ran. */
export interface FailedTaskPlace {
  nodeId: string;
  /** "" for a node task (CREATE, CONFIRM, ...). */
  service: string;
}

/** `<taskName> <service> on <nodeId>`, without the parts that are not known. */
function failedTaskText(taskName: string, place: FailedTaskPlace | undefined): string {
  const what = place?.service ? `${taskName} ${place.service}` : taskName;
  return place?.nodeId ? `${what} on ${place.nodeId}` : what;
}

/** Where the plan's failed task ran, when the end event says it. */
export function failedTaskPlaceOf(end: PlanFinishedEvent): FailedTaskPlace | undefined {
  const nodeId = end.failure?.nodeId;
  return nodeId ? { nodeId, service: end.failure?.service ?? "" } : undefined;
}

/**
 * The audit entry of a plan's end: who started it (none for a plan nobody asked for), the operation, the cluster,
 * the outcome (200 succeeded, 500 failed) and for a failure the task, its service and node. Never the failure's
 * message: it may quote a task's output.
 */
export function planEndEntry(end: PlanFinishedEvent, failedAt?: FailedTaskPlace): AuditEntry {
  const entry: AuditEntry = {
    time: new Date(end.at).toISOString(),
    tenant: end.tenant,
    user: end.startedBy ?? "",
    role: "",
    method: "PLAN",
    route: PLAN_ROUTE,
    action: `plan.${end.outcome}`,
    target: end.clusterId,
    status: end.outcome === "succeeded" ? 200 : 500,
    requestId: end.planId,
    source: "",
    operation: end.action,
  };
  if (end.outcome === "failed" && end.failure) entry.failedTask = failedTaskText(end.failure.taskName, failedTaskPlaceOf(end) ?? failedAt);
  return entry;
}

/**
 * The audit stream's message id of a plan's end: the same end delivered again (the event stored twice after a
 * crash, or redelivered to the feed after one) is dropped by the stream as a duplicate.
 */
export const planEndMessageId = (end: Pick<PlanFinishedEvent, "tenant" | "planId">) => `plan-end.${end.tenant}.${end.planId}`;
