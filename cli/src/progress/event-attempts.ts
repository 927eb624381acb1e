/**
 * Each task's attempts as the cluster's event stream tells them: when it was first dispatched (its stage's
 * `plan.stage`, or a retry's `task.started`) and every end of its own action, with a failure's output.
 */
import type { PlanStageEvent, PlanView, TaskEndedEvent, TaskStartedEvent } from "@corral/contracts";
import type { TaskAttempts } from "./plan-progress.js";

type Known = TaskAttempts & { startedAt?: number };

export class EventAttempts {
  private readonly byTask = new Map<string, Known>();

  of(taskId: string): TaskAttempts | undefined {
    return this.byTask.get(taskId);
  }

  clear(): void {
    this.byTask.clear();
  }

  /** Every task of the stage was dispatched (attempt 1) with its `plan.stage`; no `task.started` comes for them. */
  stageStarted(plan: PlanView, event: PlanStageEvent): void {
    for (const task of plan.stages[event.stage] ?? []) this.started(task.id, event.at);
  }

  /** A retry or rollback step: the task's first start stays. */
  taskStarted(event: TaskStartedEvent): void {
    this.started(event.taskId, event.at);
  }

  taskEnded(plan: PlanView | undefined, event: TaskEndedEvent): void {
    const known = this.known(event.taskId);
    // A rolled-back task also runs the rollback's other actions (DELETE, CREATE): count its own.
    const own = plan?.stages.flat().find((t) => t.id === event.taskId)?.taskName === event.taskName;
    const finished = own ? [...known.finished, { ok: event.ok, ...(event.ok || !event.output ? {} : { output: event.output }) }] : known.finished;
    const startedAt = known.startedAt ?? event.startTime;
    this.byTask.set(event.taskId, { finished, startedAt, durationMs: Math.max(0, event.resultAt - startedAt) });
  }

  private known(taskId: string): Known {
    return this.byTask.get(taskId) ?? { finished: [] };
  }

  private started(taskId: string, at: number): void {
    const known = this.known(taskId);
    this.byTask.set(taskId, { ...known, startedAt: known.startedAt ?? at });
  }
}
