/**
 * What state each task of a cluster's plans is in: from the event stream (`task.started`, `task.ended`) where it
 * was seen, else from the nodes' action history, else from its stage: done, started (`plan.stage`: every task of
 * a stage is dispatched with it, and no `task.started` comes for a first attempt) or not yet.
 */
import type { ClusterDetails, ClusterStreamEvent, PlanView } from "@corral/contracts";
import type { StageTask, TaskState } from "../../components/plan-stages.js";

export class TaskStates {
  private readonly fromEvents = new Map<string, TaskState>();
  private fromHistory = new Map<string, TaskState>();
  private readonly startedStages = new Set<string>();

  /** Returns true when the event changed a task's state. */
  apply(event: ClusterStreamEvent): boolean {
    if (event.type === "plan.stage") this.startedStages.add(stageKey(event.planId, event.stage));
    else if (event.type === "task.started") this.fromEvents.set(event.taskId, "running");
    else if (event.type === "task.ended") this.fromEvents.set(event.taskId, event.ok ? "complete" : "failed");
    else return false;
    return true;
  }

  learnHistory(cluster: ClusterDetails): void {
    this.fromHistory = new Map();
    for (const node of cluster.nodes) for (const a of node.actions) this.fromHistory.set(a.taskId, a.status === "complete" ? "complete" : "failed");
  }

  stagesOf(plan: PlanView): StageTask[][] {
    // A plan that succeeded ran every task; otherwise the stages before the current one are done.
    const doneBefore = plan.status === "succeeded" ? plan.stages.length : plan.currentStage;
    const stageState = (index: number): TaskState =>
      index < doneBefore ? "complete" : plan.status !== "failed" && this.startedStages.has(stageKey(plan.id, index)) ? "running" : "waiting";
    return plan.stages.map((stage, index) => {
      const byStage = stageState(index);
      return stage.map((task) => ({
        taskName: task.taskName,
        service: task.service ?? "",
        state: this.fromEvents.get(task.id) ?? this.fromHistory.get(task.id) ?? byStage,
      }));
    });
  }
}

const stageKey = (planId: string, stage: number) => `${planId}/${stage}`;
