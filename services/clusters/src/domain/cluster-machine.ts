import { assign, setup } from "xstate";

/**
 * The cluster actor: status and current action (spec 3.1, 3.2). Pure; the engine persists the snapshot and
 * sends events when a job starts or its plan ends.
 */

export const CLUSTER_MACHINE_VERSION = "cluster@1";

export const ClusterStatus = {
  Pending: "pending",
  Active: "active",
  Incomplete: "incomplete",
  Inconsistent: "inconsistent",
  Terminated: "terminated",
} as const;
export type ClusterStatus = (typeof ClusterStatus)[keyof typeof ClusterStatus];
export const CLUSTER_STATUSES: readonly ClusterStatus[] = Object.values(ClusterStatus);

export const ClusterAction = {
  SolveLayout: "solve_layout",
  Create: "cluster_create",
  Delete: "cluster_delete",
  Configure: "cluster_configure",
  ConfigureWithRestart: "cluster_configure_with_restart",
  StopServices: "stop_services",
  StartServices: "start_services",
  RestartServices: "restart_services",
  AddServices: "add_services",
} as const;
export type ClusterAction = (typeof ClusterAction)[keyof typeof ClusterAction];

export const ActionStatus = {
  NotSubmitted: "not_submitted",
  Running: "running",
  Complete: "complete",
  Failed: "failed",
} as const;
export type ActionStatus = (typeof ActionStatus)[keyof typeof ActionStatus];

export interface ClusterContext {
  action: ClusterAction;
  actionstatus: ActionStatus;
  planId: string;
}

export type ClusterEvent =
  | { type: "job.started"; action: ClusterAction; planId: string }
  | { type: "job.succeeded"; planId: string }
  | { type: "job.failed"; planId: string };

/** Which actions each settled state accepts (Coopr's rules; spec 3.1 and 4.7). */
const ALLOWED: Record<string, readonly ClusterAction[]> = {
  active: ["cluster_delete", "cluster_configure", "cluster_configure_with_restart", "add_services", "start_services", "stop_services", "restart_services"],
  inconsistent: ["cluster_delete", "cluster_configure", "cluster_configure_with_restart"],
  incomplete: ["cluster_delete"],
};

/** Whether a cluster in `status` may start `action`. */
export function isActionAllowed(status: ClusterStatus, action: ClusterAction): boolean {
  return ALLOWED[status]?.includes(action) ?? false;
}

/** The status a failed job leaves (spec 3.1: create and delete -> incomplete, others -> inconsistent). */
const failureStatus = (action: ClusterAction) =>
  action === "cluster_create" || action === "cluster_delete" ? "incomplete" : "inconsistent";

const startJob = {
  guard: "isAllowed",
  target: "#cluster.pending",
  actions: "recordJob",
} as const;

export const clusterMachine = setup({
  types: {
    context: {} as ClusterContext,
    events: {} as ClusterEvent,
    input: {} as { planId: string },
  },
  guards: {
    isAllowed: ({ context: _c, event }, params: { status: ClusterStatus }) =>
      event.type === "job.started" && isActionAllowed(params.status, event.action),
    isCurrentJob: ({ context, event }) => "planId" in event && event.planId === context.planId,
    wasDelete: ({ context }) => context.action === "cluster_delete",
    createOrDelete: ({ context }) => failureStatus(context.action) === "incomplete",
  },
  actions: {
    recordJob: assign(({ event }) =>
      event.type === "job.started" ? { action: event.action, planId: event.planId, actionstatus: "running" as const } : {},
    ),
    markComplete: assign({ actionstatus: "complete" as const }),
    markFailed: assign({ actionstatus: "failed" as const }),
  },
}).createMachine({
  id: "cluster",
  context: ({ input }) => ({ action: "cluster_create", actionstatus: "running", planId: input.planId }),
  initial: "pending",
  states: {
    pending: {
      on: {
        "job.succeeded": [
          { guard: { type: "isCurrentJob" }, target: "pendingSucceeded" },
        ],
        "job.failed": [{ guard: { type: "isCurrentJob" }, target: "pendingFailed" }],
      },
    },
    pendingSucceeded: {
      always: [
        { guard: "wasDelete", target: "terminated", actions: "markComplete" },
        { target: "active", actions: "markComplete" },
      ],
    },
    pendingFailed: {
      always: [
        { guard: "createOrDelete", target: "incomplete", actions: "markFailed" },
        { target: "inconsistent", actions: "markFailed" },
      ],
    },
    active: { on: { "job.started": { ...startJob, guard: { type: "isAllowed", params: { status: "active" } } } } },
    inconsistent: {
      on: { "job.started": { ...startJob, guard: { type: "isAllowed", params: { status: "inconsistent" } } } },
    },
    incomplete: {
      on: { "job.started": { ...startJob, guard: { type: "isAllowed", params: { status: "incomplete" } } } },
    },
    terminated: { type: "final" },
  },
});
