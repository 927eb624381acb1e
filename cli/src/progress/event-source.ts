/**
 * Progress from the cluster's event stream (`GET /clusters/{id}/events`, Server-Sent Events): the job's plan is
 * read once, then every event updates the snapshot (stage, steps, each task's start and end with its output),
 * until the cluster leaves `pending` for the job followed. The stream replays the cluster's history first;
 * events of plans that had ended before the watch began are skipped.
 */
import type { ClusterStatusView, ClusterStreamEvent, PlanTaskView, PlanView } from "@corral/contracts";
import { ApiError } from "../errors.js";
import type { ApiClient } from "../http/api-client.js";
import { readEventStream } from "../http/event-stream.js";
import { EventAttempts } from "./event-attempts.js";
import { assemblePlan } from "./plan-progress.js";
import { clusterPath, currentPlan, readJob } from "./poll-source.js";
import { outcomeOf, type ProgressSnapshot } from "./progress-text.js";

/**
 * Snapshots until the job ends (`"ended"`). `"poll"`: nothing was streamed, poll instead: no job runs (one look
 * says how the last ended), or the gateway serves no event stream.
 */
export async function* streamProgress(client: ApiClient, clusterId: string): AsyncGenerator<ProgressSnapshot, "poll" | "ended"> {
  const start = await readJob(client, clusterId);
  let status: ClusterStatusView = start.status;
  let plan: PlanView | undefined = currentPlan(start);
  if (outcomeOf(status) !== "running") return "poll";
  const endedBefore = new Set(start.plans.filter((p) => p.id !== plan?.id).map((p) => p.id));
  const attempts = new EventAttempts();
  const snapshot = (): ProgressSnapshot => ({
    status,
    ...(plan ? { plan: assemblePlan(plan, (task: PlanTaskView) => attempts.of(task.id)) } : {}),
  });

  const url = client.urlOf(`${clusterPath(clusterId)}/events`);
  try {
    for await (const message of readEventStream(url, { headers: client.headers() })) {
      if (message.event === "closing") continue;
      const event = JSON.parse(message.data) as ClusterStreamEvent;
      if ("planId" in event && endedBefore.has(event.planId)) continue;
      switch (event.type) {
        case "cluster.status":
          status = {
            ...status,
            status: event.status,
            action: event.action,
            actionstatus: event.status === "pending" ? "running" : status.actionstatus,
            ...event.progress,
          };
          if (event.status !== "pending") {
            // The end: the stored status says how the job ended.
            status = (await readJob(client, clusterId)).status;
            yield snapshot();
            return "ended";
          }
          break;
        case "plan.stage":
          if (plan?.id !== event.planId) {
            plan = await client.request<PlanView>("GET", `${clusterPath(clusterId)}/plans/${encodeURIComponent(event.planId)}`);
            attempts.clear();
          }
          plan = { ...plan, currentStage: event.stage };
          attempts.stageStarted(plan, event);
          break;
        case "plan.progress":
          status = { ...status, stepscompleted: event.stepscompleted, stepstotal: event.stepstotal };
          if (plan) plan = { ...plan, currentStage: event.stage };
          break;
        case "plan.finished":
          if (plan) plan = { ...plan, status: event.outcome };
          break;
        case "task.started":
          attempts.taskStarted(event);
          break;
        case "task.ended":
          attempts.taskEnded(plan, event);
          break;
        case "lease.changed":
          continue;
      }
      yield snapshot();
    }
  } catch (err) {
    // The cluster was just read, so a 404 or 405 here is a gateway without the event route.
    if (err instanceof ApiError && (err.status === 404 || err.status === 405)) return "poll";
    throw err;
  }
  return "ended";
}
