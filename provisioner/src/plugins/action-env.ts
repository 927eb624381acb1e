import type { TaskMessage } from "@corral/contracts";
import type { PluginContext, ServiceActionCall } from "./types.js";

/**
 * The variables an automator action sees, wherever it runs: the task file, the task's identity and the node's
 * address. Local actions get them on top of the sandbox's minimal environment (never the provisioner's own);
 * remote ones in the script sent to the node.
 */
export function actionVariables(ctx: PluginContext, action: ServiceActionCall, taskFile: string): Record<string, string> {
  const { task } = ctx;
  const ip = task.config.ipaddresses ?? {};
  return {
    CORRAL_TASK_FILE: taskFile,
    CORRAL_TASK_NAME: task.taskName,
    CORRAL_TASK_ID: task.taskId,
    CORRAL_DISPATCH: String(task.dispatch),
    CORRAL_TENANT: ctx.tenant,
    CORRAL_CLUSTER_ID: task.clusterId,
    CORRAL_NODE_ID: task.nodeId,
    CORRAL_HOSTNAME: task.config.hostname ?? "",
    CORRAL_SERVICE: action.service,
    CORRAL_IP: ip["access_v4"] ?? ip["bind_v4"] ?? "",
    CORRAL_PROVISIONER_ID: ctx.provisionerId,
    CORRAL_WORKER_ID: ctx.workerId,
  };
}

/** File name of a task's file (task JSON, chef attributes): unique per dispatch. */
export const taskFileName = (task: TaskMessage, prefix: string, ext: string) =>
  `${prefix}-${task.taskId.replace(/[^A-Za-z0-9._-]/g, "_")}-${task.dispatch}.${ext}`;

/** `timeout_s` of an action in seconds, or an error message. */
export function actionTimeoutSeconds(raw: unknown, fallback: number): number | string {
  const text = raw === undefined || raw === null ? "" : typeof raw === "string" ? raw.trim() : String(raw);
  if (text === "") return fallback;
  const n = Number(text);
  return Number.isFinite(n) && n > 0 ? n : `timeout_s must be a positive number of seconds, got "${text}"`;
}
