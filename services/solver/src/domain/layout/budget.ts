/**
 * The search budget shared by every phase of one solve: a deterministic step count plus an optional
 * wall-clock limit read from an injected clock (the domain never reads the system time itself).
 */
import { BadRequestError } from "@corral/contracts";
import type { SolverOptions } from "./types.js";

/** Error code of the error thrown when a search runs out of budget. */
export const SOLVER_BUDGET_EXHAUSTED = "solver_budget_exhausted";

export const DEFAULT_MAX_STEPS = 2_000_000;

/** How often (in steps) the clock is read. */
const CLOCK_EVERY = 1024;

export class Budget {
  steps = 0;
  private readonly maxSteps: number;
  private readonly deadline: number;
  private readonly clock: (() => number) | undefined;
  private nextClockCheck = 1;

  constructor(
    options: SolverOptions | undefined,
    private readonly what: string,
  ) {
    const maxSteps = options?.maxSteps ?? DEFAULT_MAX_STEPS;
    if (!Number.isFinite(maxSteps) || maxSteps < 1) {
      throw new TypeError(`options.maxSteps must be a positive number, got ${String(options?.maxSteps)}`);
    }
    this.maxSteps = maxSteps;
    const limit = options?.timeLimitMs;
    if (limit !== undefined) {
      if (!(limit > 0)) throw new TypeError(`options.timeLimitMs must be positive, got ${String(limit)}`);
      if (options?.clock === undefined) throw new TypeError("options.timeLimitMs needs options.clock");
      this.clock = options.clock;
      this.deadline = this.clock() + limit;
    } else {
      this.clock = undefined;
      this.deadline = Infinity;
    }
  }

  /** Spends `n` steps; throws `solver_budget_exhausted` when the budget is gone. */
  spend(n = 1): void {
    this.steps += n;
    if (this.steps > this.maxSteps) this.exhausted(`${this.maxSteps} steps`);
    if (this.clock !== undefined && this.steps >= this.nextClockCheck) {
      this.nextClockCheck = this.steps + CLOCK_EVERY;
      if (this.clock() > this.deadline) this.exhausted("the time limit");
    }
  }

  /** `spend` as a search's step callback that never stops the search itself (the budget throws instead). */
  readonly spender = (steps: number): boolean => {
    this.spend(steps);
    return true;
  };

  /** Steps left before the budget is exhausted (used to size sub-searches). */
  remaining(): number {
    return this.maxSteps - this.steps;
  }

  private exhausted(limit: string): never {
    throw new BadRequestError(
      `${this.what} gave up after ${limit} without an answer; the request is too hard to solve within the budget`,
      { constraint: "budget", steps: this.steps, maxSteps: this.maxSteps },
      SOLVER_BUDGET_EXHAUSTED,
    );
  }
}

/** A capped sub-budget: its own step limit, still charged to (and limited by) the parent. */
export class SubBudget {
  private used = 0;
  constructor(
    private readonly parent: Budget,
    private readonly limit: number,
  ) {}

  /** Returns false (instead of throwing) when the sub-budget is gone; the parent may still throw. */
  trySpend(n = 1): boolean {
    this.used += n;
    if (this.used > this.limit) return false;
    this.parent.spend(n);
    return true;
  }
}
