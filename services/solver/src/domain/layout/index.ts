/**
 * Layout solver, add-services solver, growing and shrinking: pure functions, no I/O, deterministic answers.
 *
 * - {@link solveLayout}(request: LayoutRequest, options?: SolverOptions): LayoutSolution — the nodes of a new
 *   cluster, Coopr's preferred layout whenever one exists, else a 400 naming the constraints that clash.
 * - {@link addServices}(request: AddServicesRequest, options?: SolverOptions): AddServicesResult — which existing
 *   nodes receive each new service.
 * - {@link checkLayout}(template: ClusterTemplate, nodes: readonly ExistingNode[]): LayoutViolation[] — the
 *   template constraints a layout breaks.
 * - {@link createHostname}(clusterName, clusterId, nodenum, dnsSuffix): string and {@link nodeIdFor}(clusterId,
 *   nodenum): string — the naming rules the layout solver uses.
 * - {@link growCluster}(request: GrowRequest, options?: SolverOptions): GrowResult — new nodes for a live cluster,
 *   existing nodes unchanged; {@link nextNodenum}(nodes): number — the nodenum after the highest.
 * - {@link checkShrink}(request: ShrinkRequest): ShrinkCheck — whether nodes may leave a live cluster, and if not
 *   which rules they would break; {@link shrinkRefusal}(violations): ConflictError — its 409.
 * - {@link replacementNode}(request: ReplaceRequest): SolvedNode — a new machine for a node, same services and types.
 *
 * Errors are `BadRequestError`s (status 400) from `contracts/src/errors.ts`: code `bad_request` with
 * `details.constraint` naming the failed check, or code {@link SOLVER_BUDGET_EXHAUSTED} when the search budget
 * (`SolverOptions.maxSteps` / `timeLimitMs`) runs out.
 */
export { solveLayout, FIRST_NODENUM } from "./solve-layout.js";
export { addServices } from "./add-services/add-services.js";
export { checkLayout } from "./check-layout.js";
export { createHostname, nodeIdFor } from "./hostname.js";
export { SOLVER_BUDGET_EXHAUSTED, DEFAULT_MAX_STEPS } from "./budget.js";
export type { LayoutViolation, SolverOptions } from "./types.js";
export { growCluster, nextNodenum } from "./resize/grow.js";
export { checkShrink, shrinkRefusal } from "./resize/shrink.js";
export { replacementNode } from "./resize/replace.js";
export type {
  GrowRequest,
  GrowResult,
  MachineTypeCatalog,
  NewNodeNaming,
  ReplaceRequest,
  ShrinkCheck,
  ShrinkRequest,
  ShrinkViolation,
} from "./resize/types.js";
