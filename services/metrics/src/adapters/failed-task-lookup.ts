import type { NatsConnection } from "@nats-io/transport-node";
import { clusterEventSubject, decode, streams, type PlanFinishedEvent, type TaskEndedEvent } from "@corral/contracts";
import { jsRequests } from "@corral/shared";
import type { FailedTaskPlace } from "../domain/plan-ends.js";

/** The first window read back from a plan's end; each next one is four times as large. */
const FIRST_WINDOW = 256;
/** Direct gets one lookup makes at most; past them the place is not known. */
const GET_BUDGET = 64;

/**
 * Finds where a failed plan's task ran (node, service) when the plan's end does not say: from the task's failed
 * `task.ended`, which the clusters service stores on its own (never inside a progress) before the plan's end. Read
 * back from the end's position in windows of the cluster's `task.ended` subject (JetStream reads forwards only):
 * a cluster's failed task ends are few, so a window costs a direct get or two (the events stream allows them:
 * `ensureLiveEventRepublish`, applied when the bus is prepared). `undefined` when not found.
 */
export function failedTaskLookup(nc: NatsConnection) {
  const js = jsRequests(nc);
  return async (end: PlanFinishedEvent, endSeq: number): Promise<FailedTaskPlace | undefined> => {
    const taskId = end.failure?.taskId;
    if (!taskId) return undefined;
    const subject = clusterEventSubject(end.tenant, end.clusterId, "task.ended");
    let high = endSeq - 1;
    let window = FIRST_WINDOW;
    let gets = 0;
    while (high >= 1 && gets < GET_BUDGET) {
      const low = Math.max(1, high - window + 1);
      let found: FailedTaskPlace | undefined;
      for (let next = low; next <= high && gets < GET_BUDGET; ) {
        gets++;
        const stored = await js.nextBySubject(streams.events, subject, next);
        if (!stored || stored.seq > high) break;
        const ended = decode<Partial<TaskEndedEvent>>(stored.data);
        if (ended.taskId === taskId && ended.ok === false && typeof ended.nodeId === "string") {
          found = { nodeId: ended.nodeId, service: typeof ended.service === "string" ? ended.service : "" };
        }
        next = stored.seq + 1;
      }
      if (found) return found;
      high = low - 1;
      window *= 4;
    }
    return undefined;
  };
}

export type FailedTaskLookup = ReturnType<typeof failedTaskLookup>;
