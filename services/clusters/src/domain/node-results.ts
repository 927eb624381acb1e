import { truncateLog, type TaskResult } from "@corral/contracts";
import { MAX_APPLIED_KEYS, MAX_NODE_ACTIONS, type ClusterNode } from "./records.js";

/** The key that makes applying one result to a node idempotent. */
export const appliedKey = (r: Pick<TaskResult, "taskId" | "dispatch">) => `${r.taskId}.${r.dispatch}`;

/**
 * A node after a task result (reference: results merge on success and failure; hostname and addresses only on
 * success; logs kept on failure). `undefined` when this result was already applied.
 */
export function applyResultToNode(node: ClusterNode, r: TaskResult, service: string): ClusterNode | undefined {
  const key = appliedKey(r);
  if (node.applied.includes(key)) return undefined;
  const ok = r.status === 0;
  const properties = { ...node.properties };
  if (ok && r.hostname) properties["hostname"] = r.hostname;
  if (ok && r.ipaddresses) {
    properties["ipaddresses"] = { ...((properties["ipaddresses"] as Record<string, string> | undefined) ?? {}), ...r.ipaddresses };
    const bind = r.ipaddresses["bind_v4"] ?? r.ipaddresses["access_v4"];
    if (bind) properties["ipaddress"] = bind;
  }
  const action: ClusterNode["actions"][number] = {
    taskId: r.taskId,
    service,
    action: r.taskName,
    submitTime: r.startTime,
    statusTime: r.endTime,
    status: ok ? "complete" : "failed",
  };
  if (!ok) {
    const stdout = truncateLog(r.stdout);
    const stderr = truncateLog(r.stderr);
    if (stdout) action.stdout = stdout;
    if (stderr) action.stderr = stderr;
  }
  return {
    ...node,
    properties,
    results: { ...node.results, ...(r.result ?? {}) },
    actions: [...node.actions, action].slice(-MAX_NODE_ACTIONS),
    applied: [...node.applied, key].slice(-MAX_APPLIED_KEYS),
  };
}
