/**
 * @corral/solver as a library: the pure algorithms (layout solver, add-services solver, planner, macro
 * expander). Each function is documented where it is defined; what they decide is in docs/catalog.md. Their
 * request and reply types (`LayoutRequest`, `PlanRequest`, `MacroNode`, ...) are the solver endpoints' contract:
 * import them from @corral/contracts.
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
} from "./domain/layout/index.js";
export type { LayoutViolation, SolverOptions } from "./domain/layout/index.js";
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
