/**
 * A plan as stages of tasks with each task's state, attempts and duration, read from the plan and the nodes'
 * action history (every attempt of a task is one action entry with the task's id).
 */
import type { NodeActionView, NodeView, PlanView } from "@corral/contracts";

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

export function planProgress(plan: PlanView, nodes: readonly NodeView[]): PlanProgress {
  const attemptsByTask = new Map<string, NodeActionView[]>();
  for (const node of nodes) {
    for (const action of node.actions) {
      const list = attemptsByTask.get(action.taskId) ?? [];
      list.push(action);
      attemptsByTask.set(action.taskId, list);
    }
  }
  const isRunning = !ENDED.has(plan.status);
  const stages = plan.stages.map((stage, index) => ({
    index,
    tasks: stage.map((task): TaskProgress => {
      // A rolled-back task's entries include the rollback's other actions (DELETE, CREATE): count its own.
      const attempts = (attemptsByTask.get(task.id) ?? []).filter((a) => a.action === task.taskName);
      const all = attemptsByTask.get(task.id) ?? [];
      const last = attempts.at(-1);
      const failed = [...attempts].reverse().find((a) => a.status === "failed");
      const state: TaskState =
        last?.status === "complete"
          ? "complete"
          : last?.status === "failed"
            ? isRunning ? "retrying" : "failed"
            : isRunning && index <= plan.currentStage ? "running" : "pending";
      const first = all[0];
      const lastResult = all.at(-1);
      return {
        id: task.id,
        taskName: task.taskName,
        ...(task.service ? { service: task.service } : {}),
        nodeId: task.nodeId,
        state,
        attempts: attempts.length,
        ...(first && lastResult && state !== "running" ? { durationMs: Math.max(0, lastResult.statusTime - first.submitTime) } : {}),
        ...(failed ? { failure: outputOf(failed) } : {}),
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
