/**
 * `@corral/solver/testing`: for tests and benchmarks only (callers use the library, `@corral/solver`). The domain
 * modules whole, so their exact public surfaces can be checked, and the internals tests exercise on their own.
 */
export * as layoutModule from "./domain/layout/index.js";
export * as plannerModule from "./domain/planner/index.js";
export * as macrosModule from "./domain/macros/index.js";
export { searchCounts } from "./domain/layout/count-search.js";
export type { CountProblem } from "./domain/layout/count-search.js";
export { ACTION_TASK_ORDER } from "./domain/planner/index.js";
