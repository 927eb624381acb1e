/** The words progress is drawn with, shared by the plain and the live renderer. */
import type { ClusterStatusView } from "@corral/contracts";
import type { PlanProgress, StageProgress, TaskProgress } from "./plan-progress.js";

/** What a progress source hands the renderer: the cluster's status and, once there is one, its job's plan. */
export interface ProgressSnapshot {
  status: ClusterStatusView;
  plan?: PlanProgress;
}

/** Lines of a failed attempt's output shown at most. */
const OUTPUT_TAIL_LINES = 8;
const OUTPUT_LINE_CHARS = 240;

export const formatDuration = (ms: number): string =>
  ms < 1000 ? `${ms}ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;

export function statusLine(s: ClusterStatusView): string {
  return `cluster ${s.clusterid}: ${s.status} (${s.action} ${s.actionstatus}) ${s.stepscompleted}/${s.stepstotal} tasks`;
}

/** `CREATE x3, CONFIRM x1`: the task names of a stage with their counts. */
export function stageSummary(stage: StageProgress): string {
  const counts = new Map<string, number>();
  for (const t of stage.tasks) counts.set(t.taskName, (counts.get(t.taskName) ?? 0) + 1);
  return [...counts].map(([name, n]) => `${name} x${n}`).join(", ");
}

export function stageLine(plan: PlanProgress, stage: StageProgress): string {
  return `stage ${stage.index + 1}/${plan.stages.length}: ${stageSummary(stage)}`;
}

/** `CONFIRM on node-1` / `install mysql on node-1`. */
export function taskLabel(t: TaskProgress): string {
  return `${t.taskName}${t.service ? ` ${t.service}` : ""} on ${t.nodeId}`;
}

export function taskLine(t: TaskProgress): string {
  const attempts = t.attempts > 1 ? ` attempt ${t.attempts}` : "";
  const duration = t.durationMs !== undefined ? ` (${formatDuration(t.durationMs)})` : "";
  return `${t.state.padEnd(8)} ${taskLabel(t)}${attempts}${duration}`;
}

/** The tail of a failed attempt's output, stderr first, each line prefixed. */
export function failureOutput(t: TaskProgress, prefix: string): string[] {
  const lines: string[] = [];
  for (const [stream, text] of [["stderr", t.failure?.stderr], ["stdout", t.failure?.stdout]] as const) {
    if (!text) continue;
    const tail = text.trimEnd().split("\n").slice(-OUTPUT_TAIL_LINES);
    for (const line of tail) lines.push(`${prefix}${stream}| ${line.slice(0, OUTPUT_LINE_CHARS)}`);
  }
  return lines;
}

/** Did the job end, and how. */
export function outcomeOf(s: ClusterStatusView): "running" | "succeeded" | "failed" {
  if (s.status === "pending") return "running";
  return s.actionstatus === "failed" || s.status === "incomplete" || s.status === "inconsistent" ? "failed" : "succeeded";
}

export function finalLine(snapshot: ProgressSnapshot): string {
  const s = snapshot.status;
  const at = snapshot.plan ? `, stage ${Math.min(snapshot.plan.currentStage + 1, snapshot.plan.stages.length)}/${snapshot.plan.stages.length}` : "";
  return outcomeOf(s) === "failed"
    ? `cluster ${s.clusterid} failed: ${s.status} (${s.action} ${s.actionstatus}${at}, ${s.stepscompleted}/${s.stepstotal} tasks)`
    : `cluster ${s.clusterid} is ${s.status} (${s.action} ${s.actionstatus}, ${s.stepscompleted}/${s.stepstotal} tasks)`;
}
