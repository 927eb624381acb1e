/**
 * Drawing a job's progress from snapshots, whatever their source. Without a terminal: plain lines, one per
 * change (status, stage, a task ending), nothing redrawn and no colour, so scripts and logs read them. On a
 * terminal: a block redrawn in place (status and bar, the current stage, its unfinished and failing tasks),
 * with finished stages left above it.
 */
import { failingTasks, type PlanProgress, type TaskProgress } from "./plan-progress.js";
import {
  failureOutput,
  finalLine,
  outcomeOf,
  stageLine,
  statusLine,
  taskLabel,
  taskLine,
  type ProgressSnapshot,
} from "./progress-text.js";

export interface ProgressRenderer {
  update(snapshot: ProgressSnapshot): void;
  /** Draws the last snapshot and the outcome: failing tasks with their output, then one final line. */
  finish(snapshot: ProgressSnapshot): void;
}

type Write = (text: string) => void;

export function plainRenderer(write: Write): ProgressRenderer {
  let lastStatus = "";
  let lastStage = -1;
  let lastPlan = "";
  let completed = 0;
  const seen = new Map<string, string>();
  const outputShown = new Map<string, number>();
  const update = (snapshot: ProgressSnapshot) => {
    // A status line when the status or action changes, not per step (the task lines count those); the job's end
    // is said by the final line, after the tasks that ended with it.
    const { status: state, action, actionstatus } = snapshot.status;
    const statusKey = `${state} ${action} ${actionstatus}`;
    if (statusKey !== lastStatus && outcomeOf(snapshot.status) === "running") write(`${statusLine(snapshot.status)}\n`);
    lastStatus = statusKey;
    const plan = snapshot.plan;
    if (!plan) return;
    if (plan.planId !== lastPlan) {
      lastPlan = plan.planId;
      lastStage = -1;
      completed = 0;
      write(`plan ${plan.planId} ${plan.action}: ${plan.stages.length} stages, ${plan.total} tasks\n`);
    }
    for (const stage of plan.stages) {
      if (stage.index > plan.currentStage && !stage.tasks.some((t) => t.state !== "pending")) continue;
      if (stage.index > lastStage) {
        write(`${stageLine(plan, stage).replace(":", " started:")}\n`);
        lastStage = stage.index;
      }
      for (const task of stage.tasks) {
        const key = `${task.state}/${task.attempts}`;
        if (seen.get(task.id) === key || task.state === "pending" || task.state === "running") continue;
        seen.set(task.id, key);
        if (task.state === "complete") completed++;
        write(`  [${completed}/${plan.total}] ${taskLine(task)}\n`);
        // A last attempt's output is shown once, when it fails, not again when the plan gives up.
        if (outputShown.get(task.id) !== task.attempts) for (const line of failureOutput(task, "      ")) write(`${line}\n`);
        outputShown.set(task.id, task.attempts);
      }
    }
  };
  return {
    update,
    finish(snapshot) {
      update(snapshot);
      writeOutcome(write, snapshot, (t) => t);
    },
  };
}

export interface LiveOptions {
  /** Terminal width: lines are cut to it so the redraw counts lines right. */
  columns: number;
  color: boolean;
}

const ESC = "\u001b[";
const paint = (code: number) => (text: string) => `${ESC}${code}m${text}${ESC}0m`;
const COLOURS = { running: paint(33), retrying: paint(33), complete: paint(32), failed: paint(31), pending: (t: string) => t };

export function liveRenderer(write: Write, options: LiveOptions): ProgressRenderer {
  let drawn = 0;
  let stagesPrinted = 0;
  let lastPlan = "";
  const colour = (state: TaskProgress["state"], text: string) => (options.color ? COLOURS[state](text) : text);
  const cut = (line: string) => (line.length >= options.columns ? `${line.slice(0, Math.max(1, options.columns - 2))}…` : line);
  const redraw = (lines: string[]) => {
    const clear = drawn > 0 ? `${ESC}${drawn}A\r${ESC}J` : "";
    write(clear + lines.map((l) => `${cut(l)}\n`).join(""));
    drawn = lines.length;
  };
  const draw = (snapshot: ProgressSnapshot) => {
    const plan = snapshot.plan;
    const permanent: string[] = [];
    if (plan && plan.planId !== lastPlan) {
      lastPlan = plan.planId;
      stagesPrinted = 0;
    }
    // Stages behind the current one are finished: print each once above the live block.
    while (plan && stagesPrinted < Math.min(plan.currentStage, plan.stages.length)) {
      const stage = plan.stages[stagesPrinted];
      if (stage) permanent.push(colour("complete", `done     ${stageLine(plan, stage)}`));
      stagesPrinted++;
    }
    if (permanent.length > 0) {
      redraw(permanent);
      drawn = 0;
    }
    redraw(liveBlock(snapshot, colour));
  };
  return {
    update: draw,
    finish(snapshot) {
      draw(snapshot);
      writeOutcome(write, snapshot, (t) => (options.color ? COLOURS[outcomeOf(snapshot.status) === "failed" ? "failed" : "complete"](t) : t));
    },
  };
}

function liveBlock(snapshot: ProgressSnapshot, colour: (state: TaskProgress["state"], text: string) => string): string[] {
  const lines = [`${statusLine(snapshot.status)}  ${bar(snapshot.status.stepscompleted, snapshot.status.stepstotal)}`];
  const plan = snapshot.plan;
  if (!plan) return lines;
  const stage = plan.stages[Math.min(plan.currentStage, plan.stages.length - 1)];
  if (stage) {
    lines.push(stageLine(plan, stage));
    const shown = stage.tasks.filter((t) => t.state !== "complete");
    for (const task of shown.slice(0, 10)) lines.push(`  ${colour(task.state, taskLine(task))}`);
    if (shown.length > 10) lines.push(`  ... ${shown.length - 10} more`);
  }
  for (const task of failingTasks(plan).filter((t) => !stage?.tasks.includes(t))) lines.push(`  ${colour(task.state, taskLine(task))}`);
  return lines;
}

function bar(done: number, total: number, width = 24): string {
  const filled = total > 0 ? Math.round((done / total) * width) : 0;
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`;
}

function writeOutcome(write: Write, snapshot: ProgressSnapshot, emphasise: (text: string) => string): void {
  const failed = snapshot.plan ? failingTasks(snapshot.plan as PlanProgress) : [];
  if (outcomeOf(snapshot.status) === "failed" && failed.length > 0) {
    write("failed tasks:\n");
    for (const task of failed) {
      write(`  ${taskLabel(task)}: ${task.state} after ${task.attempts} attempt${task.attempts === 1 ? "" : "s"}\n`);
      for (const line of failureOutput(task, "    ")) write(`${line}\n`);
    }
  }
  write(`${emphasise(finalLine(snapshot))}\n`);
}
