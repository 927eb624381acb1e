/**
 * The side-effect record of the chaos suite: every provider and automator call a provisioner completes appends one
 * JSON line to a shared file (O_APPEND, a synchronous write, so the line is in the kernel before the result is
 * published and survives a SIGKILL of the writer right after). The checker compares it with stored state.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { SHELL_SPEC, type AutomatorPlugin, type Plugin, type PluginContext, type PluginOutcome } from "@corral/provisioner";
import type { PluginSpec } from "@corral/contracts";

/** One completed plugin call. */
export interface SideEffect {
  taskId: string;
  /** The dispatch (attempt) of the task the call ran for. */
  dispatch: number;
  tenant: string;
  clusterId: string;
  nodeId: string;
  /** `CREATE`, `CONFIRM`, `DELETE`, `BOOTSTRAP recorder`, `INSTALL kube-apiserver`, ... */
  action: string;
  provisionerId: string;
  workerId: string;
  pid: number;
  status: number;
  /** ms, when the call started and ended. */
  startedAt: number;
  at: number;
}

/** The side-effect a call stands for: a task's action (BOOTSTRAP runs once per automator of the node). */
export const effectKey = (e: Pick<SideEffect, "taskId" | "action">) => `${e.taskId} ${e.action}`;

function describeCall(ctx: PluginContext, automator?: string): string {
  const service = ctx.task.config.service?.name;
  if (ctx.task.taskName === "BOOTSTRAP") return `BOOTSTRAP ${automator ?? ""}`.trim();
  return service ? `${ctx.task.taskName} ${service}` : ctx.task.taskName;
}

/** Wraps plugins so every completed call appends its {@link SideEffect} to `file` before it returns. */
export function recordingPlugins(plugins: Plugin[], file: string): Plugin[] {
  const record = async (ctx: PluginContext, action: string, run: () => Promise<PluginOutcome>): Promise<PluginOutcome> => {
    const startedAt = Date.now();
    const outcome = await run();
    const line: SideEffect = {
      taskId: ctx.task.taskId,
      dispatch: ctx.task.dispatch,
      tenant: ctx.tenant,
      clusterId: ctx.task.clusterId,
      nodeId: ctx.task.nodeId,
      action,
      provisionerId: ctx.provisionerId,
      workerId: ctx.workerId,
      pid: process.pid,
      status: outcome.status,
      startedAt,
      at: Date.now(),
    };
    appendFileSync(file, JSON.stringify(line) + "\n");
    return outcome;
  };
  return plugins.map(
    (p): Plugin =>
      p.kind === "providertypes"
        ? {
            ...p,
            create: (ctx) => record(ctx, describeCall(ctx), () => p.create(ctx)),
            confirm: (ctx) => record(ctx, describeCall(ctx), () => p.confirm(ctx)),
            delete: (ctx) => record(ctx, describeCall(ctx), () => p.delete(ctx)),
          }
        : {
            ...p,
            bootstrap: (ctx) => record(ctx, describeCall(ctx, p.spec.name), () => p.bootstrap(ctx)),
            runAction: (ctx, action) => record(ctx, describeCall(ctx), () => p.runAction(ctx, action)),
          },
  );
}

/** The test automator's type: the `shell` fields, so catalogs written for shell only change the action type. */
export const RECORDER_SPEC: PluginSpec = {
  ...SHELL_SPEC,
  name: "recorder",
  description: "Test automator of the chaos suite: runs nothing, each action only leaves its line in the side-effect record",
};

/** The test automator: every call succeeds after `delayMs` (its line is written by {@link recordingPlugins}). */
export function createRecorderAutomator(delayMs = 0): AutomatorPlugin {
  const pause = () => new Promise<PluginOutcome>((resolve) => setTimeout(() => resolve({ status: 0, stdout: "recorded\n" }), delayMs));
  return { kind: "automatortypes", spec: RECORDER_SPEC, bootstrap: pause, runAction: pause };
}

/** Every line of the record (a line cut short by a crash mid-write is skipped). */
export function readSideEffects(file: string): SideEffect[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const out: SideEffect[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as SideEffect);
    } catch {
      // a torn last line of a killed writer: the call's result was never published either
    }
  }
  return out;
}
