/** Cluster views people ask for more than the endpoints give: `status`, `plan`, `watch`, `cluster nodes`. */
import type { ClusterDetails, ClusterSummary, PlanView } from "@corral/contracts";
import { ApiError, ExitCode, UsageError } from "../errors.js";
import type { ApiClient } from "../http/api-client.js";
import { clusterTable, nodeTable, planProgressView } from "../output/cluster-views.js";
import { countsText, healthCounts, UNCHECKED } from "../output/node-health.js";
import { followJob } from "../progress/follow-job.js";
import { planProgress } from "../progress/plan-progress.js";
import { flag, listOption, stringOption, type Command } from "./command.js";

const cluster = (id: string) => `/clusters/${encodeURIComponent(id)}`;

/** Clusters whose nodes `status` reads at the same time. */
const HEALTH_READS_AT_ONCE = 4;

/** A cluster of `corral status`: its summary and, unless left out, its nodes counted by health state. */
type StatusRow = ClusterSummary & { health?: Record<string, number> };

export const statusCommand: Command = {
  words: ["status"],
  summary: "the tenant's clusters at a glance, with their nodes' health (a user sees its own, the tenant admin all)",
  options: {
    status: { type: "string", multiple: true, valueName: "status", description: "only clusters in this status (repeatable)" },
    "no-health": { type: "boolean", description: "leave out the HEALTH column (it reads each live cluster's nodes)" },
  },
  async run(ctx, input) {
    const statuses = listOption(input, "status");
    const client = ctx.client();
    const clusters = await client.request<ClusterSummary[]>("GET", "/clusters", statuses.length > 0 ? { query: { status: statuses.join(",") } } : {});
    if (flag(input, "no-health")) return { result: { value: clusters, table: () => clusterTable(clusters) } };
    const rows = await withHealth(client, clusters);
    // Where no provider checks its machines (sim, unless asked), a column of "unchecked" says nothing.
    const checked = rows.some((c) => Object.keys(c.health ?? {}).some((state) => state !== UNCHECKED));
    return { result: { value: rows, table: () => clusterTable(rows, checked ? (c) => (c.health ? countsText(c.health) : "-") : undefined) } };
  },
};

/** Each live cluster with its nodes counted by health state (a few reads at a time); terminated ones as they are. */
async function withHealth(client: ApiClient, clusters: readonly ClusterSummary[]): Promise<StatusRow[]> {
  const rows: StatusRow[] = [...clusters];
  const live = clusters.flatMap((c, i) => (c.status === "terminated" ? [] : [i]));
  const readNext = async (): Promise<void> => {
    for (let i = live.shift(); i !== undefined; i = live.shift()) {
      const summary = clusters[i] as ClusterSummary;
      try {
        const details = await client.request<ClusterDetails>("GET", cluster(summary.id));
        rows[i] = { ...summary, health: Object.fromEntries(healthCounts(details.nodes)) };
      } catch (err) {
        // Gone (or no longer the caller's) since the list was read: shown without health.
        if (!(err instanceof ApiError && err.status === 404)) throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: HEALTH_READS_AT_ONCE }, readNext));
  return rows;
}

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
  summary: "a cluster's nodes: hostname, addresses, services, health (state, since, and why when not healthy), last action",
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
