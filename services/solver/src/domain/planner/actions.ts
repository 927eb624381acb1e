/**
 * The closed sets the planner works with: cluster actions, task names, the per-action task order and the
 * cross-service ordering rules (reference/coopr-algorithms.md 3.1, spec 2.5 dependency rules 3-5).
 */
import type { ServiceActionName } from "../../../../../shared/src/entities.js";

/** A cluster operation that is planned as staged tasks (spec 3.2, upper case as in the plan's `action`). */
export const PlanAction = {
  ClusterCreate: "CLUSTER_CREATE",
  ClusterDelete: "CLUSTER_DELETE",
  ClusterConfigure: "CLUSTER_CONFIGURE",
  ClusterConfigureWithRestart: "CLUSTER_CONFIGURE_WITH_RESTART",
  StopServices: "STOP_SERVICES",
  StartServices: "START_SERVICES",
  RestartServices: "RESTART_SERVICES",
  AddServices: "ADD_SERVICES",
} as const;
export type PlanAction = (typeof PlanAction)[keyof typeof PlanAction];

/** A task's name (spec 2.8 `taskName`). `CREATE`, `CONFIRM`, `BOOTSTRAP` and `DELETE` are node-level. */
export const TaskName = {
  Create: "CREATE",
  Confirm: "CONFIRM",
  Bootstrap: "BOOTSTRAP",
  Install: "INSTALL",
  Remove: "REMOVE",
  Initialize: "INITIALIZE",
  Configure: "CONFIGURE",
  Start: "START",
  Stop: "STOP",
  Delete: "DELETE",
} as const;
export type TaskName = (typeof TaskName)[keyof typeof TaskName];

const T = TaskName;

/** Node-level ("hardware") tasks: one per node, `service` is the empty string, always present. */
export const NODE_TASKS: ReadonlySet<TaskName> = new Set<TaskName>([T.Create, T.Confirm, T.Bootstrap, T.Delete]);

/** Per-node, per-service task order of every action (reference 3.1, Coopr `Actions`). */
export const ACTION_TASK_ORDER: Readonly<Record<PlanAction, readonly TaskName[]>> = {
  CLUSTER_CREATE: [T.Create, T.Confirm, T.Bootstrap, T.Install, T.Configure, T.Initialize, T.Start],
  CLUSTER_DELETE: [T.Delete],
  CLUSTER_CONFIGURE: [T.Bootstrap, T.Configure],
  CLUSTER_CONFIGURE_WITH_RESTART: [T.Bootstrap, T.Stop, T.Configure, T.Start],
  STOP_SERVICES: [T.Stop],
  START_SERVICES: [T.Start],
  RESTART_SERVICES: [T.Stop, T.Start],
  ADD_SERVICES: [T.Bootstrap, T.Install, T.Configure, T.Initialize, T.Start],
};

/** The service definition key (`provisioner.actions.<key>`) of a service-level task. */
export const SERVICE_ACTION_KEY: Readonly<Partial<Record<TaskName, ServiceActionName>>> = {
  INSTALL: "install",
  REMOVE: "remove",
  INITIALIZE: "initialize",
  CONFIGURE: "configure",
  START: "start",
  STOP: "stop",
};

/** Which dependency lists drive a rule: `install.*` or `runtime.*` (requires and uses alike). */
export type DependencyKind = "install" | "runtime";

/**
 * A cross-service ordering rule. For a service X that depends (kind) on Y: `from` of Y runs before `to` of X;
 * when `reversed`, `to` of X runs before `from` of Y (dependents are stopped/removed first).
 */
export interface OrderingRule {
  readonly from: TaskName;
  readonly to: TaskName;
  readonly kind: DependencyKind;
  readonly reversed: boolean;
}

/**
 * Coopr's four action dependencies plus the spec's removal rule (spec 2.5 rule 3; no action uses REMOVE today).
 * CONFIGURE never gets cross-service edges.
 */
export const ORDERING_RULES: readonly OrderingRule[] = [
  { from: T.Install, to: T.Install, kind: "install", reversed: false },
  { from: T.Remove, to: T.Remove, kind: "install", reversed: true },
  { from: T.Start, to: T.Start, kind: "runtime", reversed: false },
  { from: T.Start, to: T.Initialize, kind: "runtime", reversed: false },
  { from: T.Stop, to: T.Stop, kind: "runtime", reversed: true },
];

/** Actions that may name one service (`service`) instead of all. */
export const SINGLE_SERVICE_ACTIONS: ReadonlySet<PlanAction> = new Set<PlanAction>([
  PlanAction.StartServices,
  PlanAction.StopServices,
  PlanAction.RestartServices,
]);

const ALL_ACTIONS: ReadonlySet<string> = new Set(Object.values(PlanAction));

/** Accepts the spec's lower-case action names (`cluster_create`) and the upper-case ones. */
export function parsePlanAction(action: string): PlanAction | undefined {
  const upper = action.toUpperCase();
  return ALL_ACTIONS.has(upper) ? (upper as PlanAction) : undefined;
}
