/**
 * The layout and add-services solvers' own types (see `index.ts` for the functions). Their request and reply types
 * are the solver endpoints' contract, in @corral/contracts.
 */

/**
 * Search limits. The step budget is deterministic (the same request always gets the same answer);
 * the time limit is a safety net and needs a clock, since the domain never reads the system time.
 */
export interface SolverOptions {
  /**
   * Maximum search steps (service-set enumeration nodes + count-search nodes + LP pivots, or for
   * add-services: placement-search nodes). Exceeding it throws a `solver_budget_exhausted` error.
   * @default 2_000_000
   */
  maxSteps?: number;
  /** Wall-clock limit in milliseconds, checked against `clock`; requires `clock`. @default none */
  timeLimitMs?: number;
  /** Millisecond clock used with `timeLimitMs` (e.g. `() => performance.now()`). */
  clock?: () => number;
  /**
   * Require every requested service on at least one node (otherwise a constrained service with no `min`
   * quantity may end up on zero nodes; docs/catalog.md, Layout). Layout solver only.
   * @default false
   */
  requireEveryService?: boolean;
}

/** A constraint a layout breaks (see `checkLayout`). */
export interface LayoutViolation {
  constraint:
    | "mustcoexist"
    | "cantcoexist"
    | "hardwaretypes"
    | "imagetypes"
    | "quantities"
    | "size";
  message: string;
  /** Ids of the offending nodes, when the violation is about nodes. */
  nodeIds?: string[];
}
