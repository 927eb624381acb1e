/**
 * @corral/solver as a library: the pure algorithms (layout solver, add-services solver, growing, shrinking and
 * replacing nodes of a live cluster, planner, macro expander). Each function is documented where it is defined;
 * what they decide is in docs/catalog.md. The request and reply types of the solver endpoints (`LayoutRequest`,
 * `PlanRequest`, `MacroNode`, ...) are their contract: import them from @corral/contracts. Growing, shrinking and
 * replacing have no endpoint; their types (`GrowRequest`, `ShrinkCheck`, ...) are exported here.
 */
export {
  solveLayout,
  addServices,
  checkLayout,
  createHostname,
  nodeIdFor,
  FIRST_NODENUM,
  SOLVER_BUDGET_EXHAUSTED,
  DEFAULT_MAX_STEPS,
  growCluster,
  nextNodenum,
  checkShrink,
  shrinkRefusal,
  replacementNode,
} from "./domain/layout/index.js";
export type {
  LayoutViolation,
  SolverOptions,
  GrowRequest,
  GrowResult,
  MachineTypeCatalog,
  NewNodeNaming,
  ReplaceRequest,
  ShrinkCheck,
  ShrinkRequest,
  ShrinkViolation,
} from "./domain/layout/index.js";
export {
  planAction,
  planGraph,
  numberTasks,
  resolveClusterDependencies,
  PlanAction,
  TaskName,
  parsePlanAction,
} from "./domain/planner/index.js";
export type { NumberedPlan, NumberedTask } from "./domain/planner/index.js";
export { createMacroContext, compileConfig, expandConfig, expandString, validateMacros, DEFAULT_IP_TYPE } from "./domain/macros/index.js";
export type { CompiledConfig, MacroContext } from "./domain/macros/index.js";
