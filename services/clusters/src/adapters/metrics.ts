import { CLUSTER_STATUSES, type PlanAction, type TaskMessage, type TaskResult } from "@corral/contracts";
import { LabeledCounter, LabeledHistogram, sampledGauge, type MetricsRegistry } from "@corral/shared";
import type { ClusterReader } from "./cluster-store.js";
import type { PlanOutcome } from "../domain/plan-steps.js";

/**
 * What the engine counts for Prometheus: plans started and finished by action, task dispatches (and retries) and
 * results by task name with their durations. Labels come from closed vocabularies (plan actions, task names,
 * outcomes): no cluster, tenant or node ids. With several clusters instances each counts what it did; sum them.
 */
export interface EngineMetrics {
  planStarted(action: PlanAction): void;
  planFinished(action: PlanAction, outcome: PlanOutcome): void;
  /** Task messages just published (republished ones after a crash are not counted again). */
  tasksPublished(messages: readonly TaskMessage[]): void;
  /** A task result as it arrives. */
  taskResult(result: TaskResult): void;
}

/** Seconds: a sim task takes milliseconds, a real machine's create or install minutes. */
const TASK_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/** The engine's counters on `registry`; none (metrics off): every call does nothing. */
export function createEngineMetrics(registry: MetricsRegistry | undefined): EngineMetrics {
  const plansStarted = new LabeledCounter(registry, {
    name: "corral_plans_started_total",
    help: "Plans started, by plan action (CLUSTER_CREATE, CLUSTER_DELETE, ...)",
    labelNames: ["action"],
  });
  const plansFinished = new LabeledCounter(registry, {
    name: "corral_plans_finished_total",
    help: "Plans ended, by plan action and outcome (succeeded or failed)",
    labelNames: ["action", "outcome"],
  });
  const dispatched = new LabeledCounter(registry, {
    name: "corral_tasks_dispatched_total",
    help: "Task dispatches published to the provisioners, by task name (retries included)",
    labelNames: ["task"],
  });
  const retried = new LabeledCounter(registry, {
    name: "corral_tasks_retried_total",
    help: "Task dispatches after the first of the same task (retries and rollback steps), by task name",
    labelNames: ["task"],
  });
  const durations = new LabeledHistogram(registry, {
    name: "corral_task_duration_seconds",
    help: "Task results by task name and outcome (completed or failed), with the time the task ran",
    labelNames: ["task", "outcome"],
    buckets: TASK_BUCKETS,
  });
  return {
    planStarted: (action) => plansStarted.series({ action }).inc(),
    planFinished: (action, outcome) => plansFinished.series({ action, outcome }).inc(),
    tasksPublished(messages) {
      for (const m of messages) {
        if (m.republished) continue;
        dispatched.series({ task: m.taskName }).inc();
        if (m.dispatch > 1) retried.series({ task: m.taskName }).inc();
      }
    },
    taskResult(r) {
      const outcome = r.status === 0 ? "completed" : "failed";
      durations.series({ task: r.taskName, outcome }).observe(Math.max(0, r.endTime - r.startTime) / 1000);
    },
  };
}

/**
 * `corral_clusters{status}`: clusters by status as this instance's mirror of the clusters bucket holds them
 * (counts kept as records change, so a scrape costs nothing at any number of clusters). Every clusters instance
 * mirrors the whole bucket: take one instance's value (max), not the sum.
 */
export function registerClusterGauge(registry: MetricsRegistry, clusters: ClusterReader): void {
  sampledGauge(registry, {
    name: "corral_clusters",
    help: "Clusters by status (every status listed, 0 included); each clusters instance reports all of them",
    labelNames: ["status"],
    sample: () => {
      const counts = clusters.countsByStatus();
      return CLUSTER_STATUSES.map((status) => [{ status }, counts.get(status) ?? 0] as const);
    },
  });
}
