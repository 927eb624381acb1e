import type { Json, JsonObject } from "./entities.js";
import type { TaskName } from "./task-names.js";

/**
 * The task protocol between the clusters service and provisioners (docs/architecture.md, Task protocol).
 *
 * - Tasks: stream CORRAL_TASKS (work queue) on `corral.tasks.<tenant>`, one durable pull consumer per tenant
 *   (`tasks-<tenant>`). Each dispatch is published with message id `<taskId>.<dispatch>`, so a re-publish is
 *   deduplicated. A worker runs the task, publishes its TaskResult, then acks; long tasks send in-progress acks.
 * - Results: stream CORRAL_RESULTS on `corral.results.<tenant>.<taskId>.<dispatch>`, or successes of one plan
 *   together on `corral.results.<tenant>.<planId>.batch` (kept for days), read by the clusters
 *   service through one shared durable consumer. A worker handed a redelivered task first looks for a stored result
 *   of the dispatch (`hasStoredResult`): if one exists, the task already ran and it only acks.
 * - Events: stream CORRAL_EVENTS on `corral.events.<tenant>.<kind>`.
 *
 * The names (streams, subjects, consumers) are in subjects.ts; the streams and consumers are made by
 * shared/src/tasks.ts.
 */

/** What every plugin gets about a node (the node part of Coopr's task config). */
export interface TaskNodeInfo {
  hostname: string;
  ipaddresses: Record<string, string>;
  nodenum: number;
  hardwaretype: string;
  imagetype: string;
  flavor?: string;
  image?: string;
  sshuser?: string;
  services: string[];
  automators: string[];
}

export interface TaskConfig extends TaskNodeInfo {
  /** The cluster config, macros already expanded for this node (hardware tasks get it unexpanded). */
  cluster: JsonObject;
  /** Only for service actions. */
  service?: { name: string; action: { type: string; fields: Record<string, string> } };
  /** The provider with admin fields and the user's provider fields merged into `provisioner`. */
  provider: { name: string; description?: string; providertype: string; provisioner: JsonObject };
  /** Every node of the cluster by id; omitted (with `nodesOmitted`) for clusters above the configured size. */
  nodes?: Record<string, TaskNodeInfo>;
  nodesOmitted?: boolean;
  /** Results earlier tasks returned for this node (`providerid`, `ssh-auth`, ...). */
  results: JsonObject;
  /**
   * Only for a service action whose fields say `hosts: service`, and only when `nodes` is carried: every node whose
   * task in this task's stage runs the same action of the same service (this node included), by id, with how to
   * reach it. The tasks of that step share one object.
   */
  stepNodes?: Record<string, TaskNodeReach>;
}

/** How to reach a node, without any secret: the `ssh-auth` and `ssh_host_keys` results its provider returned. */
export interface TaskNodeReach {
  "ssh-auth"?: Json;
  ssh_host_keys?: Json;
}

/** One dispatch of one task, as published on `corral.tasks.<tenant>`. */
export interface TaskMessage {
  tenant: string;
  clusterId: string;
  planId: string;
  taskId: string;
  /** 1 for the first dispatch; every retry or rollback step of the same task gets the next number. */
  dispatch: number;
  taskName: TaskName;
  nodeId: string;
  /** ms */
  submitTime: number;
  /**
   * Set when the clusters service publishes this dispatch again after a crash: it may already have run (the
   * first copy can be outside the duplicate window), so the worker checks for a result before running it.
   */
  republished?: boolean;
  config: TaskConfig;
}

/** How one task went: what a plugin answers, and the body of its `TaskResult`. */
export interface TaskOutcome {
  /** 0 is success; anything else is a failure (its value is kept as the failure code). */
  status: number;
  /** Last `MAX_LOG_CHARS` characters at most. */
  stdout?: string;
  stderr?: string;
  /** Replace the node's hostname and addresses (`access_v4`, `bind_v4`) on success. */
  hostname?: string;
  ipaddresses?: Record<string, string>;
  /** Merged into the node's results on success and failure; passed to later tasks of the node (`providerid`, ...). */
  result?: Record<string, Json>;
}

/** What a worker reports for one dispatch. `status` 0 is success. */
export interface TaskResult extends TaskOutcome {
  tenant: string;
  clusterId: string;
  planId: string;
  taskId: string;
  dispatch: number;
  taskName: TaskName;
  nodeId: string;
  provisionerId: string;
  workerId: string;
  /** ms */
  startTime: number;
  endTime: number;
}

/** Longest stdout/stderr kept on a result or node action. */
export const MAX_LOG_CHARS = 2048;

/** Keeps the last `MAX_LOG_CHARS` characters, marking a cut. */
export function truncateLog(text: string | undefined): string | undefined {
  if (text === undefined || text.length <= MAX_LOG_CHARS) return text;
  return "[snipped]" + text.slice(text.length - MAX_LOG_CHARS);
}

/** Message id of one dispatch: JetStream drops a re-publish within the duplicate window. */
export const taskMessageId = (taskId: string, dispatch: number) => `${taskId}.${dispatch}`;

/** How long a worker may hold a task without an in-progress ack before it is redelivered elsewhere. */
export const TASK_ACK_WAIT_MS = 15_000;
/** How long the clusters service may hold a batch of results without a progress ack (then another instance gets it). */
export const RESULTS_ACK_WAIT_MS = 6_000;
/** Window within which a re-published dispatch is recognised as a duplicate. */
export const DUPLICATE_WINDOW_MS = 10 * 60_000;

/**
 * Several results of one plan in one message on `resultBatchSubject`, which a provisioner publishes for successes
 * that end at about the same time: one stored message (one fsync) instead of one each (shared/src/result-messages.ts).
 */
export interface ResultBatch {
  results: TaskResult[];
}

/** The most results one batch holds. */
export const MAX_RESULT_BATCH = 32;

/** Which dispatch of which task of which plan. */
export interface DispatchRef {
  tenant: string;
  planId: string;
  taskId: string;
  dispatch: number;
}
