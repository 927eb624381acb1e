/**
 * Progress by polling: the cluster's status, its newest plan and its nodes' action history, once per interval,
 * until the job ends. Used until the gateway serves the cluster's event stream.
 */
import type { ClusterDetails, ClusterStatusView, PlanView } from "@corral/contracts";
import type { ApiClient } from "../http/api-client.js";
import { planProgress } from "./plan-progress.js";
import { outcomeOf, type ProgressSnapshot } from "./progress-text.js";

export interface PollOptions {
  /** @default 1000 */
  intervalMs?: number;
}

/** Snapshots until the job ends; the last one is the final state. */
export async function* pollProgress(client: ApiClient, clusterId: string, options: PollOptions = {}): AsyncGenerator<ProgressSnapshot> {
  const intervalMs = options.intervalMs ?? 1000;
  const cluster = `/clusters/${encodeURIComponent(clusterId)}`;
  for (;;) {
    const status = await client.request<ClusterStatusView>("GET", `${cluster}/status`);
    const plans = await client.request<PlanView[]>("GET", `${cluster}/plans`);
    // Plans come newest first; the newest is the job's once its action is the cluster's.
    const plan = plans[0]?.action.toLowerCase() === status.action ? plans[0] : undefined;
    if (plan) {
      const details = await client.request<ClusterDetails>("GET", cluster);
      yield { status, plan: planProgress(plan, details.nodes) };
    } else {
      yield { status };
    }
    if (outcomeOf(status) !== "running") return;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
