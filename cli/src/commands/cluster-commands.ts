/** Cluster views people ask for more than the endpoints give: `status`, `plan`, `watch`, `cluster nodes`. */
import type { ClusterDetails, ClusterSummary, PlanView } from "@corral/contracts";
import { ExitCode, UsageError } from "../errors.js";
import { clusterTable, nodeTable, planProgressView } from "../output/cluster-views.js";
import { followJob } from "../progress/follow-job.js";
import { planProgress } from "../progress/plan-progress.js";
import { flag, listOption, stringOption, type Command } from "./command.js";

const cluster = (id: string) => `/clusters/${encodeURIComponent(id)}`;

export const statusCommand: Command = {
  words: ["status"],
  summary: "the tenant's clusters at a glance (a user sees its own, the tenant admin all)",
  options: {
    status: { type: "string", multiple: true, valueName: "status", description: "only clusters in this status (repeatable)" },
  },
  async run(ctx, input) {
    const statuses = listOption(input, "status");
    const clusters = await ctx.client().request<ClusterSummary[]>("GET", "/clusters", statuses.length > 0 ? { query: { status: statuses.join(",") } } : {});
    return { result: { value: clusters, table: () => clusterTable(clusters) } };
  },
};

export const planCommand: Command = {
  words: ["plan"],
  summary: "a cluster's plan (the newest unless named) as stages with each task's state and duration",
  args: ["<cluster-id>", "[plan-id]"],
  async run(ctx, input) {
    const [clusterId = "", planId] = input.positionals;
    const client = ctx.client();
    const plan = planId
      ? await client.request<PlanView>("GET", `${cluster(clusterId)}/plans/${encodeURIComponent(planId)}`)
      : (await client.request<PlanView[]>("GET", `${cluster(clusterId)}/plans`))[0];
    if (!plan) {
      ctx.stderr.write(`cluster ${clusterId} has no plan yet\n`);
      return { exitCode: ExitCode.Failed };
    }
    const details = await client.request<ClusterDetails>("GET", cluster(clusterId));
    const progress = planProgress(plan, details.nodes);
    return { result: { value: progress, table: () => planProgressView(progress) } };
  },
};

export const watchCommand: Command = {
  words: ["watch"],
  summary: "follow a cluster's current job from its event stream: stages, tasks done of total, failing tasks with their output; exit 1 when it fails",
  args: ["<cluster-id>"],
  options: {
    poll: { type: "boolean", description: "poll the cluster instead of reading its event stream" },
    interval: { type: "string", valueName: "ms", description: "between two polls (default 1000)" },
  },
  run(ctx, input) {
    const interval = stringOption(input, "interval");
    return followJob(ctx, input.positionals[0] ?? "", {
      poll: flag(input, "poll"),
      ...(interval === undefined ? {} : { intervalMs: positiveInteger(interval) }),
    });
  },
};

export const nodesCommand: Command = {
  words: ["clusters", "nodes"],
  summary: "a cluster's nodes: hostname, addresses, services, last action",
  args: ["<cluster-id>"],
  async run(ctx, input) {
    const details = await ctx.client().request<ClusterDetails>("GET", cluster(input.positionals[0] ?? ""));
    return { result: { value: details.nodes, table: () => nodeTable(details.nodes) } };
  },
};

function positiveInteger(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--interval ${text}: must be a whole number of ms above 0`);
  return n;
}
