/**
 * A plan drawn as stages, left to right, each with its tasks grouped by what they do (task and service) and
 * counted by state. Grouping keeps a 10,000-node plan to a few lines per stage.
 */
import { h } from "./dom.js";

export type TaskState = "waiting" | "running" | "complete" | "failed";

export interface StageTask {
  taskName: string;
  service: string;
  state: TaskState;
}

const STATES: readonly TaskState[] = ["failed", "running", "complete", "waiting"];

export function planStages(stages: readonly (readonly StageTask[])[], currentStage: number | undefined): HTMLElement {
  return h(
    "ol",
    { class: "stages" },
    ...stages.map((tasks, index) => {
      const groups = new Map<string, Record<TaskState, number>>();
      for (const task of tasks) {
        const key = task.service ? `${task.taskName} ${task.service}` : task.taskName;
        const counts = groups.get(key) ?? { waiting: 0, running: 0, complete: 0, failed: 0 };
        counts[task.state]++;
        groups.set(key, counts);
      }
      const stageState = STATES.find((s) => tasks.some((t) => t.state === s)) ?? "waiting";
      return h(
        "li",
        { class: `stage stage-${stageState}${index === currentStage ? " current" : ""}`, dataset: { stage: String(index) } },
        h("h4", null, `Stage ${index + 1}`, h("span", { class: "muted" }, ` · ${tasks.length} ${tasks.length === 1 ? "task" : "tasks"}`)),
        h(
          "ul",
          null,
          ...[...groups].map(([name, counts]) =>
            h(
              "li",
              { class: "task-group" },
              h("span", { class: "task-name" }, name),
              ...STATES.filter((s) => counts[s] > 0).map((s) => h("span", { class: `badge state-${s}`, title: s }, `${counts[s]} ${s}`)),
            ),
          ),
        ),
      );
    }),
  );
}
