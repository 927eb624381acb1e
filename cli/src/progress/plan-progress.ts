/**
 * A plan as stages of tasks with each task's state, attempts and duration, read from the plan and the nodes'
 * action history (every attempt of a task is one action entry with the task's id).
 */
import type { NodeActionView, NodeView, PlanTaskView, PlanView } from "@corral/contracts";

export type TaskState = "pending" | "running" | "retrying" | "complete" | "failed";

export interface TaskProgress {
  id: string;
  taskName: string;
  service?: string;
  nodeId: string;
  state: TaskState;
  /** Attempts finished so far (a rolled-back CONFIRM counts its re-runs). */
  attempts: number;
  /** First submit to last result, ms; absent before the first result. */
  durationMs?: number;
  /** Output of the last failed attempt. */
  failure?: { stdout?: string; stderr?: string };
}

export interface StageProgress {
  /** 0-based. */
  index: number;
  tasks: TaskProgress[];
}

export interface PlanProgress {
  planId: string;
  clusterId: string;
  action: string;
  /** The plan's state: running, failing, succeeded, failed. */
  status: string;
  currentStage: number;
  createTime: number;
  stages: StageProgress[];
  done: number;
  total: number;
}

/** Plan states after which nothing runs. */
const ENDED = new Set(["succeeded", "failed"]);

export const isPlanRunning = (status: string): boolean => !ENDED.has(status);

/** What is known of one task's attempts, from whichever source. */
export interface TaskAttempts {
  /** Finished attempts of the task's own action, oldest first. */
  finished: Array<{ ok: boolean; output?: { stdout?: string; stderr?: string } }>;
  /** First dispatch to last result, ms. */
  durationMs?: number;
}

/** The plan's stages with each task's state, from the attempts a source knows of (by task id). */
export function assemblePlan(plan: PlanView, attemptsOf: (task: PlanTaskView) => TaskAttempts | undefined): PlanProgress {
  const isRunning = isPlanRunning(plan.status);
  const stages = plan.stages.map((stage, index) => ({
    index,
    tasks: stage.map((task): TaskProgress => {
      const known = attemptsOf(task);
      const finished = known?.finished ?? [];
      const last = finished.at(-1);
      const failed = [...finished].reverse().find((a) => !a.ok);
      const state: TaskState = last?.ok
        ? "complete"
        : last
          ? isRunning ? "retrying" : "failed"
          : isRunning && index <= plan.currentStage ? "running" : "pending";
      return {
        id: task.id,
        taskName: task.taskName,
        ...(task.service ? { service: task.service } : {}),
        nodeId: task.nodeId,
        state,
        attempts: finished.length,
        ...(known?.durationMs !== undefined && state !== "running" ? { durationMs: known.durationMs } : {}),
        ...(failed?.output ? { failure: failed.output } : {}),
      };
    }),
  }));
  const tasks = stages.flatMap((s) => s.tasks);
  return {
    planId: plan.id,
    clusterId: plan.clusterId,
    action: plan.action,
    status: plan.status,
    currentStage: plan.currentStage,
    createTime: plan.createTime,
    stages,
    done: tasks.filter((t) => t.state === "complete").length,
    total: tasks.length,
  };
}

/** The plan with its tasks' states read from the nodes' action history. */
export function planProgress(plan: PlanView, nodes: readonly NodeView[]): PlanProgress {
  const historyByTask = new Map<string, NodeActionView[]>();
  for (const node of nodes) {
    for (const action of node.actions) historyByTask.set(action.taskId, [...(historyByTask.get(action.taskId) ?? []), action]);
  }
  return assemblePlan(plan, (task) => {
    const all = historyByTask.get(task.id);
    if (!all) return undefined;
    // A rolled-back task's entries include the rollback's other actions (DELETE, CREATE): count its own.
    const own = all.filter((a) => a.action === task.taskName);
    const first = all[0];
    const last = all.at(-1);
    return {
      finished: own.map((a) => ({ ok: a.status === "complete", ...(a.status === "failed" ? { output: outputOf(a) } : {}) })),
      ...(first && last ? { durationMs: Math.max(0, last.statusTime - first.submitTime) } : {}),
    };
  });
}

function outputOf(action: NodeActionView): { stdout?: string; stderr?: string } {
  return {
    ...(action.stdout ? { stdout: action.stdout } : {}),
    ...(action.stderr ? { stderr: action.stderr } : {}),
  };
}

/** The tasks that failed for good (plan ended) or failed an attempt and wait for another (plan running). */
export function failingTasks(progress: PlanProgress): TaskProgress[] {
  return progress.stages.flatMap((s) => s.tasks).filter((t) => t.state === "failed" || t.state === "retrying");
}
