/**
 * Plugins that record every execution, for tests that count how often a task really ran on the provisioner side
 * (a redelivered or re-published task that runs again shows up twice here, whatever the results stream dedups).
 */
import { bundledPlugins, type Plugin, type PluginContext, type PluginOutcome } from "@corral/provisioner";
import type { TaskName } from "@corral/contracts";

/** One plugin call for one task dispatch. */
export interface Execution {
  provisionerId: string;
  taskId: string;
  dispatch: number;
  taskName: TaskName;
  clusterId: string;
  nodeId: string;
  /** ms */
  startedAt: number;
  /** ms; undefined while running (or when the call never finished) */
  endedAt?: number;
  status?: number;
  /** The CREATE result's `providerid`, when there is one. */
  providerid?: string;
  /** The `providerid` the task's message carried among the node's results (from the node's last CREATE). */
  carriedProviderid?: string;
}

/** A shared log of executions (one per test, shared by its in-process provisioners). */
export interface ExecutionLog {
  readonly executions: Execution[];
  /** `plugins` wrapped so every call is recorded (default: the bundled ones). */
  plugins(plugins?: Plugin[]): Plugin[];
  /** Executions by task id. */
  byTask(): Map<string, Execution[]>;
}

export function createExecutionLog(): ExecutionLog {
  const executions: Execution[] = [];
  const record = async (ctx: PluginContext, run: () => Promise<PluginOutcome>): Promise<PluginOutcome> => {
    const e: Execution = {
      provisionerId: ctx.provisionerId,
      taskId: ctx.task.taskId,
      dispatch: ctx.task.dispatch,
      taskName: ctx.task.taskName,
      clusterId: ctx.task.clusterId,
      nodeId: ctx.task.nodeId,
      startedAt: Date.now(),
    };
    const carried = ctx.task.config.results?.["providerid"];
    if (typeof carried === "string") e.carriedProviderid = carried;
    executions.push(e);
    const outcome = await run();
    e.endedAt = Date.now();
    e.status = outcome.status;
    const providerid = outcome.result?.["providerid"];
    if (typeof providerid === "string") e.providerid = providerid;
    return outcome;
  };
  const wrap = (p: Plugin): Plugin =>
    p.kind === "providertypes"
      ? {
          kind: p.kind,
          spec: p.spec,
          create: (ctx) => record(ctx, () => p.create(ctx)),
          confirm: (ctx) => record(ctx, () => p.confirm(ctx)),
          delete: (ctx) => record(ctx, () => p.delete(ctx)),
        }
      : {
          kind: p.kind,
          spec: p.spec,
          // BOOTSTRAP calls bootstrap of every automator of the node: one task, recorded once per automator.
          bootstrap: (ctx) => record(ctx, () => p.bootstrap(ctx)),
          runAction: (ctx, action) => record(ctx, () => p.runAction(ctx, action)),
        };
  return {
    executions,
    plugins: (plugins = bundledPlugins()) => plugins.map(wrap),
    byTask() {
      const out = new Map<string, Execution[]>();
      for (const e of executions) {
        const list = out.get(e.taskId) ?? [];
        list.push(e);
        out.set(e.taskId, list);
      }
      return out;
    },
  };
}
