import {
  PROVIDER_TASKS,
  TaskName,
  isTaskName,
  serviceActionOf,
  type Json,
  truncateLog,
  type TaskMessage,
  type TaskResult,
} from "@corral/contracts";
import type { PluginSet } from "./plugin-set.js";
import type { PluginContext, PluginOutcome } from "./plugins/types.js";


/** What the runner needs besides the task: what every plugin call gets, the plugins, and a clock. */
export interface RunTaskEnv extends Omit<PluginContext, "task" | "providerSpec"> {
  plugins: PluginSet;
  now: () => number;
}

/**
 * Runs one task with the matching plugin and builds its result. Never throws for the task's own failures: an unknown
 * task or plugin type, a missing service action or a plugin exception is a result with status 1 and the reason in
 * stderr. (An abort of `env.signal` is the caller's to notice; the outcome is then discarded.)
 */
export async function runTask(task: TaskMessage, env: RunTaskEnv): Promise<TaskResult> {
  const startTime = env.now();
  let outcome: PluginOutcome;
  try {
    outcome = await dispatch(task, env);
  } catch (err) {
    const e = err as { name?: unknown; message?: unknown };
    const what = typeof e?.message === "string" ? `${String(e.name ?? "Error")}: ${e.message}` : String(err);
    env.log.warn("plugin failed", { taskId: task.taskId, taskName: task.taskName, err });
    outcome = { status: 1, stderr: `plugin error: ${what}` };
  }
  const status = Number.isInteger(outcome.status) ? outcome.status : 1;
  const result: TaskResult = {
    tenant: env.tenant,
    clusterId: task.clusterId,
    planId: task.planId,
    taskId: task.taskId,
    dispatch: task.dispatch,
    taskName: task.taskName,
    nodeId: task.nodeId,
    provisionerId: env.provisionerId,
    workerId: env.workerId,
    status,
    startTime,
    endTime: env.now(),
  };
  const stdout = truncateLog(outcome.stdout);
  const stderr = truncateLog(outcome.stderr);
  if (stdout) result.stdout = stdout;
  if (stderr) result.stderr = stderr;
  if (outcome.hostname !== undefined) result.hostname = outcome.hostname;
  if (outcome.ipaddresses !== undefined) result.ipaddresses = outcome.ipaddresses;
  if (outcome.result !== undefined) result.result = outcome.result;
  return result;
}

async function dispatch(task: TaskMessage, env: RunTaskEnv): Promise<PluginOutcome> {
  const name = String(task.taskName ?? "").toUpperCase();
  if (!isTaskName(name)) return { status: 1, stderr: `unknown task ${String(task.taskName)}` };
  if (typeof task.config !== "object" || task.config === null) return { status: 1, stderr: "malformed task: no config" };
  const config = task.config;
  const providerType = config.provider?.providertype;
  const provider = typeof providerType === "string" ? env.plugins.providers.get(providerType) : undefined;
  const ctx: PluginContext = {
    task,
    tenant: env.tenant,
    workDir: env.workDir,
    provisionerId: env.provisionerId,
    workerId: env.workerId,
    signal: env.signal,
    log: env.log,
    ...(provider ? { providerSpec: provider.spec } : {}),
  };
  if (PROVIDER_TASKS.has(name)) {
    if (!provider) return { status: 1, stderr: `unknown provider type ${String(providerType)} (this provisioner has ${list(env.plugins.names.providertypes)})` };
    if (name === TaskName.Create) return provider.create(ctx);
    if (name === TaskName.Confirm) return provider.confirm(ctx);
    return provider.delete(ctx);
  }
  if (name === TaskName.Bootstrap) return bootstrap(ctx, env);
  if (serviceActionOf(name) === undefined) return { status: 1, stderr: `task ${name} is not handled` };
  const service = config.service;
  const type = service?.action?.type;
  if (!service || typeof type !== "string") return { status: 1, stderr: `task ${name} has no service action` };
  const automator = env.plugins.automators.get(type);
  if (!automator) return { status: 1, stderr: `unknown automator type ${type} (this provisioner has ${list(env.plugins.names.automatortypes)})` };
  return automator.runAction(ctx, { name, service: service.name, fields: service.action.fields ?? {} });
}

/** Every automator of the node in order; stops at the first failure; results merged shallowly (last wins). */
async function bootstrap(ctx: PluginContext, env: RunTaskEnv): Promise<PluginOutcome> {
  const automators = Array.isArray(ctx.task.config.automators) ? ctx.task.config.automators : [];
  const merged: Record<string, Json> = {};
  let stdout = "";
  let stderr = "";
  for (const type of automators) {
    const automator = env.plugins.automators.get(type);
    if (!automator) {
      return { status: 1, stdout, stderr: stderr + `unknown automator type ${type} (this provisioner has ${list(env.plugins.names.automatortypes)})` };
    }
    const outcome = await automator.bootstrap(ctx);
    if (outcome.stdout) stdout += outcome.stdout;
    if (outcome.stderr) stderr += outcome.stderr;
    Object.assign(merged, outcome.result ?? {});
    if (outcome.status !== 0) {
      return { status: outcome.status, stdout, stderr: stderr || `bootstrap of ${type} failed`, result: merged };
    }
  }
  return { status: 0, stdout, stderr, ...(Object.keys(merged).length ? { result: merged } : {}) };
}

const list = (names: string[]) => (names.length ? names.join(", ") : "none");
