/**
 * Planner: turns a cluster action into stages of tasks ordered by service dependencies
 * (docs/catalog.md, Plans). Pure: no I/O, no clock.
 */
export { planAction, planGraph } from "./plan.js";
export { numberTasks } from "./task-ids.js";
export { resolveClusterDependencies } from "./dependencies.js";
export { PlanAction, TaskName, ACTION_TASK_ORDER, ORDERING_RULES, parsePlanAction } from "./actions.js";
export type { PlanGraph, TaskGroup, GroupEdge } from "./graph.js";
export type { NumberedPlan, NumberedTask, NumberTasksOptions } from "./task-ids.js";
export type { ClusterDependencies } from "./dependencies.js";
export type { OrderingRule, DependencyKind } from "./actions.js";
