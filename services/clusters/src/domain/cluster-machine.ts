import { assign, setup } from "xstate";
import type { ClusterAction, ClusterStatus, JsonObject, Service } from "@corral/contracts";
import { machineVersions } from "./actors.js";

/**
 * The cluster actor: status and current action (docs/architecture.md, Durable actors). Pure; the durable actor
 * (src/actor/) persists the snapshot and sends events when a job starts or its plan ends, and when a lease is extended.
 */

export const CLUSTER_MACHINE_VERSION = "cluster@1";

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

/** What a job changes on the cluster record in the write that starts it. */
export interface JobChanges {
  config?: JsonObject;
  services?: string[];
  serviceDefs?: Service[];
  /** A job that adds or removes nodes: the cluster's node count and numbering after it (domain/ids.ts). */
  numNodes?: number;
  nextNodenum?: number;
  removedNodenums?: number[];
}

/** Total and completed tasks of a plan. */
export interface JobSteps {
  stepstotal: number;
  stepscompleted: number;
}

/**
 * Events carry what the record outside the snapshot needs (see domain/cluster-steps.ts); the machine decides
 * whether the event is taken.
 */
export type ClusterEvent =
  /**
   * `leavingNodenums`: the nodes the job takes off the cluster when its plan succeeds (remove_nodes, replace_node),
   * `leavingServices` the services that leave with them.
   */
  | {
      type: "job.started";
      action: ClusterAction;
      planId: string;
      changes?: JobChanges;
      leavingNodenums?: number[];
      leavingServices?: string[];
    }
  | { type: "job.succeeded"; planId: string; steps?: JobSteps }
  | { type: "job.failed"; planId: string; steps?: JobSteps }
  /** `at`: the time of the request (ms), which the new end must lie after. */
  | { type: "lease.extend"; expireTime: number; at: number };

/** Which actions each settled state accepts (Coopr's rules; docs/architecture.md, Durable actors). */
const ALLOWED: Record<string, readonly ClusterAction[]> = {
  active: [
    "cluster_delete",
    "cluster_configure",
    "cluster_configure_with_restart",
    "add_services",
    "add_nodes",
    "remove_nodes",
    "replace_node",
    "start_services",
    "stop_services",
    "restart_services",
  ],
  inconsistent: ["cluster_delete", "cluster_configure", "cluster_configure_with_restart"],
  incomplete: ["cluster_delete"],
};

/** Whether a cluster in `status` may start `action`. */
export function isActionAllowed(status: ClusterStatus, action: ClusterAction): boolean {
  return ALLOWED[status]?.includes(action) ?? false;
}

/** The status a failed job leaves: create and delete -> incomplete, others -> inconsistent. */
const failureStatus = (action: ClusterAction) =>
  action === "cluster_create" || action === "cluster_delete" ? "incomplete" : "inconsistent";

const startJob = {
  guard: "isAllowed",
  target: "#cluster.pending",
  actions: "recordJob",
} as const;

/** A settled cluster's lease may be extended (it stays where it is); one busy with a job or terminated may not. */
const extendLease = (status: "active" | "inconsistent" | "incomplete") => ({ "lease.extend": { target: `#cluster.${status}` } }) as const;

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
    /** Its nodes leave the tenant's usage and every provider field kept for it goes. */
    clusterTerminated: () => {},
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
    active: {
      on: { "job.started": { ...startJob, guard: { type: "isAllowed", params: { status: "active" } } }, ...extendLease("active") },
    },
    inconsistent: {
      on: { "job.started": { ...startJob, guard: { type: "isAllowed", params: { status: "inconsistent" } } }, ...extendLease("inconsistent") },
    },
    incomplete: {
      on: { "job.started": { ...startJob, guard: { type: "isAllowed", params: { status: "incomplete" } } }, ...extendLease("incomplete") },
    },
    terminated: { type: "final", entry: "clusterTerminated" },
  },
});

/** Every cluster machine a stored snapshot may name. */
export const clusterMachines = machineVersions("cluster", CLUSTER_MACHINE_VERSION, { [CLUSTER_MACHINE_VERSION]: clusterMachine });
