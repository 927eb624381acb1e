/**
 * The cluster vocabulary (docs/architecture.md, Durable actors): statuses, and the actions a cluster runs. An action is
 * lower case on the cluster record and in the API (`cluster_create`); the planner and plan records name a planned
 * action in upper case (`CLUSTER_CREATE`). {@link planActionOf} is the one mapping between them.
 */

export const ClusterStatus = {
  Pending: "pending",
  Active: "active",
  Incomplete: "incomplete",
  Inconsistent: "inconsistent",
  Terminated: "terminated",
} as const;
export type ClusterStatus = (typeof ClusterStatus)[keyof typeof ClusterStatus];
export const CLUSTER_STATUSES: readonly ClusterStatus[] = Object.values(ClusterStatus);

const plannedActions = {
  Create: "cluster_create",
  Delete: "cluster_delete",
  Configure: "cluster_configure",
  ConfigureWithRestart: "cluster_configure_with_restart",
  StopServices: "stop_services",
  StartServices: "start_services",
  RestartServices: "restart_services",
  AddServices: "add_services",
  AddNodes: "add_nodes",
  RemoveNodes: "remove_nodes",
  ReplaceNode: "replace_node",
} as const;

export const ClusterAction = {
  /** Solving the layout of a new cluster: plans no tasks. */
  SolveLayout: "solve_layout",
  ...plannedActions,
} as const;
export type ClusterAction = (typeof ClusterAction)[keyof typeof ClusterAction];

/** Every cluster action but solving: those the planner plans as staged tasks. */
export type PlannedClusterAction = (typeof plannedActions)[keyof typeof plannedActions];

/** A planned action as the planner and plan records name it. */
export type PlanAction = Uppercase<PlannedClusterAction>;

export function planActionOf(action: PlannedClusterAction): PlanAction {
  return action.toUpperCase() as PlanAction;
}

type PlanActions = { readonly [K in keyof typeof plannedActions]: Uppercase<(typeof plannedActions)[K]> };
export const PlanAction = Object.fromEntries(
  Object.entries(plannedActions).map(([key, action]) => [key, planActionOf(action)]),
) as PlanActions;

const PLAN_ACTIONS: ReadonlySet<string> = new Set(Object.values(PlanAction));

/** Accepts both names of a planned action (`cluster_create`, `CLUSTER_CREATE`). */
export function parsePlanAction(action: string): PlanAction | undefined {
  const upper = action.toUpperCase();
  return PLAN_ACTIONS.has(upper) ? (upper as PlanAction) : undefined;
}
