/**
 * What happens to a cluster, as the clusters service publishes it on the events stream
 * (`clusterEventSubject`) and the gateway streams it to clients (`GET /v2/clusters/{id}/events`, `/v2/events`).
 * The JSON is a stable API: clients (the `corral` CLI's `watch`) parse it. Add fields; never rename or remove.
 */
import type { ClusterAction, ClusterStatus } from "./cluster-actions.js";
import type { NodeHealthState } from "./node-health.js";
import type { TaskName } from "./task-names.js";

/** Every kind of cluster event, the last token(s) of its subject. */
export const CLUSTER_EVENT_TYPES = [
  "cluster.status",
  "lease.changed",
  "plan.stage",
  "plan.progress",
  "plan.finished",
  "task.started",
  "task.ended",
  "node.health",
] as const;
export type ClusterEventType = (typeof CLUSTER_EVENT_TYPES)[number];

/** Fields every cluster event has. */
export interface ClusterEventBase {
  type: ClusterEventType;
  tenant: string;
  clusterId: string;
  /** When it happened (ms since the epoch). */
  at: number;
}

/** Steps of the cluster's current (or last) job, as `GET /clusters/{id}/status` shows them. */
export interface StepProgress {
  stepstotal: number;
  stepscompleted: number;
}

/** The cluster changed status (`pending` when a job starts, then `active`, `incomplete`, `terminated`, ...). */
export interface ClusterStatusEvent extends ClusterEventBase {
  type: "cluster.status";
  status: ClusterStatus;
  /** Absent on the first event of a cluster. */
  previous?: ClusterStatus;
  /** The job this status belongs to (lower case, `cluster_create`) and its plan. */
  action: ClusterAction;
  planId: string;
  progress: StepProgress;
}

/** The lease end moved (`POST /clusters/{id}` with `expireTime`). */
export interface LeaseChangedEvent extends ClusterEventBase {
  type: "lease.changed";
  /** ms; 0: the lease never ends. */
  expireTime: number;
  previousExpireTime: number;
}

/**
 * A stage of a plan started: every task of the stage is dispatched (attempt 1) with it; no `task.started` is
 * published for them. The stage's tasks are in the plan (`GET /v2/clusters/{id}/plans/{planId}`).
 */
export interface PlanStageEvent extends ClusterEventBase {
  type: "plan.stage";
  planId: string;
  /** Upper case, as plans show it (`CLUSTER_CREATE`). */
  action: string;
  /** 0-based. */
  stage: number;
  stages: number;
  /** Tasks in this stage. */
  tasks: number;
}

/** More of a plan's tasks finished. */
export interface PlanProgressEvent extends ClusterEventBase {
  type: "plan.progress";
  planId: string;
  /** The stage now running (0-based). */
  stage: number;
  stepscompleted: number;
  stepstotal: number;
  /**
   * Only on the events stream, never to clients: the successful task ends this progress records, stored inside it
   * to save the stream one message (and one fsync) per task. {@link clientEventsOf} hands each to clients as its
   * own `task.ended`, just before this event and under the same id.
   */
  tasksEnded?: TaskEndedEvent[];
  /**
   * Only on the events stream, never to clients: what the same write started or ended (the next stage, the plan's
   * end), stored inside it for the same reason; {@link clientEventsOf} hands each to clients right after it.
   */
  then?: Array<PlanStageEvent | PlanFinishedEvent>;
}

/** A plan ended. */
export interface PlanFinishedEvent extends ClusterEventBase {
  type: "plan.finished";
  planId: string;
  action: string;
  outcome: "succeeded" | "failed";
  /** What failed, when it did; the node and service when the plan knew them at its end. */
  failure?: { taskId: string; taskName: TaskName; message: string; nodeId?: string; service?: string };
  /** The user whose request started the plan; absent for a plan nobody asked for (a delete at lease expiry). */
  startedBy?: string;
}

/** What identifies one dispatch of one task. */
export interface TaskEventFields {
  planId: string;
  taskId: string;
  taskName: TaskName;
  nodeId: string;
  /** The service a service task acts on; "" for node tasks (CREATE, CONFIRM, ...). */
  service: string;
  /** 1 for the first dispatch, then one more per retry or rollback step. */
  attempt: number;
}

/**
 * A retry or rollback step (attempt >= 2) was dispatched to the tenant's task queue; first attempts are announced
 * by their stage's `plan.stage`. Provisioners report nothing when a worker picks a task up (their NATS user may
 * publish results only), so this is the dispatch; the worker's own start time is `startTime` on the task's
 * `task.ended`.
 */
export interface TaskStartedEvent extends ClusterEventBase, TaskEventFields {
  type: "task.started";
}

/**
 * A task ended: a failure as soon as the clusters service receives its result, a success with the write of its
 * plan that records it (inside that write's `plan.progress` on the stream); either before its plan's next stage.
 */
export interface TaskEndedEvent extends ClusterEventBase, TaskEventFields {
  type: "task.ended";
  ok: boolean;
  /** The task's exit status: 0 is success. */
  status: number;
  /** When the worker started and ended the task (ms); `resultAt` is when it published the result. */
  startTime: number;
  durationMs: number;
  resultAt: number;
  /** On failure: the end of the task's output (provider secrets removed), at most `OUTPUT_TAIL_CHARS` each. */
  output?: { stdout?: string; stderr?: string };
}

/**
 * A node's health changed (node-health.ts): its machine was found in another state, or the same state with
 * another message. `since` is when this state began, `checkedAt` the check that found it.
 */
export interface NodeHealthEvent extends ClusterEventBase {
  type: "node.health";
  nodeId: string;
  state: NodeHealthState;
  message: string;
  since: number;
  checkedAt: number;
  /** The state before; absent for the node's first finding. */
  previous?: NodeHealthState;
}

/**
 * The events clients get for one stored event, in order: the `task.ended` events a `plan.progress` holds, the
 * progress itself without them, then what it holds as `then`; any other event as it is.
 */
export function clientEventsOf(stored: ClusterStreamEvent): ClusterStreamEvent[] {
  if (stored.type !== "plan.progress" || (stored.tasksEnded === undefined && stored.then === undefined)) return [stored];
  const { tasksEnded = [], then = [], ...progress } = stored;
  return [...tasksEnded, progress, ...then];
}

/** Characters of a failed task's stdout and stderr its `task.ended` event carries. */
export const OUTPUT_TAIL_CHARS = 1000;

export type ClusterStreamEvent =
  | ClusterStatusEvent
  | LeaseChangedEvent
  | PlanStageEvent
  | PlanProgressEvent
  | PlanFinishedEvent
  | TaskStartedEvent
  | TaskEndedEvent
  | NodeHealthEvent;

/** One event as a client receives it: the stream sequence is its id (SSE `id:`, WebSocket `id`), for resuming. */
export interface DeliveredClusterEvent {
  id: number;
  event: ClusterStreamEvent;
}

/** What a WebSocket client of `/v2/events` sends: subscribe to one cluster, or (tenant admins) to the whole tenant. */
export type EventSocketRequest =
  | { type: "subscribe"; clusterId: string; since?: number }
  | { type: "subscribe"; tenant: true; since?: number }
  | { type: "unsubscribe"; clusterId: string }
  | { type: "unsubscribe"; tenant: true };

/** What the server sends on `/v2/events`. */
export type EventSocketMessage =
  | ({ type: "event"; subscription: string } & DeliveredClusterEvent)
  | { type: "subscribed"; subscription: string }
  | { type: "unsubscribed"; subscription: string }
  | { type: "error"; status: number; error: string; message: string; subscription?: string };

/**
 * A browser cannot set headers on a WebSocket, so `/v2/events` also takes the identity and token as offered
 * subprotocols (as Kubernetes does): `corral.events.v1` (answered back), `corral.user.<base64url>`,
 * `corral.tenant.<base64url>` and `corral.bearer.<token>`. Headers win where both are given.
 */
export const EVENT_SOCKET_PROTOCOL = "corral.events.v1";
const USER_PROTOCOL = "corral.user.";
const TENANT_PROTOCOL = "corral.tenant.";
const BEARER_PROTOCOL = "corral.bearer.";

export interface SocketCredentials {
  userId?: string;
  tenant?: string;
  /** A token, without `Bearer `. */
  token?: string;
}

const base64Url = (text: string) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const fromBase64Url = (text: string): string | undefined => {
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
};

/** The subprotocols a client offers to open `/v2/events` with these credentials. */
export function eventSocketProtocols(credentials: SocketCredentials): string[] {
  const protocols = [EVENT_SOCKET_PROTOCOL];
  if (credentials.userId) protocols.push(USER_PROTOCOL + base64Url(credentials.userId));
  if (credentials.tenant) protocols.push(TENANT_PROTOCOL + base64Url(credentials.tenant));
  if (credentials.token) protocols.push(BEARER_PROTOCOL + credentials.token);
  return protocols;
}

/** The credentials in a `Sec-WebSocket-Protocol` header; values that do not decode are left out. */
export function socketCredentialsOf(protocolHeader: string): SocketCredentials {
  const credentials: SocketCredentials = {};
  for (const offered of protocolHeader.split(",")) {
    const protocol = offered.trim();
    if (protocol.startsWith(USER_PROTOCOL)) credentials.userId = fromBase64Url(protocol.slice(USER_PROTOCOL.length));
    else if (protocol.startsWith(TENANT_PROTOCOL)) credentials.tenant = fromBase64Url(protocol.slice(TENANT_PROTOCOL.length));
    else if (protocol.startsWith(BEARER_PROTOCOL)) credentials.token = protocol.slice(BEARER_PROTOCOL.length);
  }
  return credentials;
}
