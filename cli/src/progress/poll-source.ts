/**
 * Progress by polling: the cluster's status, its newest plan and its nodes' action history, once per interval,
 * until the job ends. The fallback where the gateway serves no event stream.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { ClusterDetails, ClusterStatusView, PlanView } from "@corral/contracts";
import type { ApiClient } from "../http/api-client.js";
import { planProgress } from "./plan-progress.js";
import { outcomeOf, type ProgressSnapshot } from "./progress-text.js";

export interface PollOptions {
  /** @default 1000 */
  intervalMs?: number;
}

export const clusterPath = (clusterId: string): string => `/clusters/${encodeURIComponent(clusterId)}`;

/** The cluster's status and plans (newest first). */
export async function readJob(client: ApiClient, clusterId: string): Promise<{ status: ClusterStatusView; plans: PlanView[] }> {
  const status = await client.request<ClusterStatusView>("GET", `${clusterPath(clusterId)}/status`);
  const plans = await client.request<PlanView[]>("GET", `${clusterPath(clusterId)}/plans`);
  return { status, plans };
}

/** The plan of the cluster's current (or last) job: the newest, once its action is the cluster's. */
export function currentPlan(job: { status: ClusterStatusView; plans: readonly PlanView[] }): PlanView | undefined {
  const newest = job.plans[0];
  return newest?.action.toLowerCase() === job.status.action ? newest : undefined;
}

/** One look at the cluster: status, and its job's plan with each task's state from the nodes' history. */
export async function readSnapshot(client: ApiClient, clusterId: string): Promise<ProgressSnapshot> {
  const job = await readJob(client, clusterId);
  const plan = currentPlan(job);
  if (!plan) return { status: job.status };
  const details = await client.request<ClusterDetails>("GET", clusterPath(clusterId));
  return { status: job.status, plan: planProgress(plan, details.nodes) };
}

/** Snapshots until the job ends; the last one is the final state. */
export async function* pollProgress(client: ApiClient, clusterId: string, options: PollOptions = {}): AsyncGenerator<ProgressSnapshot> {
  for (;;) {
    const snapshot = await readSnapshot(client, clusterId);
    yield snapshot;
    if (outcomeOf(snapshot.status) !== "running") return;
    await sleep(options.intervalMs ?? 1000);
  }
}
