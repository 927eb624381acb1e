/**
 * The planner's rules over the shared vocabularies of planned actions and task names: the per-action task order
 * and the cross-service ordering rules (docs/catalog.md, Plans; dependency rules 3-5).
 */
import { PlanAction, parsePlanAction, NODE_TASKS, TaskName, serviceActionOf } from "@corral/contracts";

export { NODE_TASKS, PlanAction, TaskName, parsePlanAction, serviceActionOf };

const T = TaskName;

/** The actions that add, remove or replace nodes: plans of several phases, each with its own task order. */
export type NodeChangeAction = typeof PlanAction.AddNodes | typeof PlanAction.RemoveNodes | typeof PlanAction.ReplaceNode;
/** Every other action: one task order for every planned node. */
export type ClusterWideAction = Exclude<PlanAction, NodeChangeAction>;

export const NODE_CHANGE_ACTIONS: ReadonlySet<PlanAction> = new Set<PlanAction>([
  PlanAction.AddNodes,
  PlanAction.RemoveNodes,
  PlanAction.ReplaceNode,
]);

export const isNodeChangeAction = (action: PlanAction): action is NodeChangeAction => NODE_CHANGE_ACTIONS.has(action);

/** Per-node, per-service task order of every cluster-wide action (docs/catalog.md, Plans). */
export const ACTION_TASK_ORDER: Readonly<Record<ClusterWideAction, readonly TaskName[]>> = {
  CLUSTER_CREATE: [T.Create, T.Confirm, T.Bootstrap, T.Install, T.Configure, T.Initialize, T.Start],
  CLUSTER_DELETE: [T.Delete],
  CLUSTER_CONFIGURE: [T.Bootstrap, T.Configure],
  CLUSTER_CONFIGURE_WITH_RESTART: [T.Bootstrap, T.Stop, T.Configure, T.Start],
  STOP_SERVICES: [T.Stop],
  START_SERVICES: [T.Start],
  RESTART_SERVICES: [T.Stop, T.Start],
  ADD_SERVICES: [T.Bootstrap, T.Install, T.Configure, T.Initialize, T.Start],
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
 * Task orders of the phases of the node actions (docs/catalog.md, Plans): new nodes are built as a create builds
 * them; removed nodes have their services stopped and removed, then their machines deleted; a replaced node's
 * machine is deleted; remaining nodes whose config changed are configured, and restarted when asked.
 */
export const NODE_CHANGE_TASK_ORDER = {
  arrive: ACTION_TASK_ORDER.CLUSTER_CREATE,
  remove: [T.Stop, T.Remove, T.Delete],
  replaced: [T.Delete],
  reconfigure: [T.Configure],
  reconfigureWithRestart: [T.Stop, T.Configure, T.Start],
} as const satisfies Record<string, readonly TaskName[]>;

/**
 * Dependency rules 3 and 4 as task orders (docs/catalog.md, Services and dependencies). CONFIGURE never gets
 * cross-service edges.
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
