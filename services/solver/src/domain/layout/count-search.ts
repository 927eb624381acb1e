/**
 * The count search: how many nodes get each node layout. Coopr returns the lexicographically greatest
 * valid count vector in preference order (docs/catalog.md, Layout), found by a greedy start and
 * a reverse-lexicographic enumeration that is exponential when no vector is valid and that misses valid
 * vectors when the greedy fill falls short. This search returns the same vector whenever one exists and
 * proves infeasibility otherwise:
 *
 * - depth-first over layouts in preference order, trying the largest count first, so the first complete
 *   vector is the lexicographically greatest;
 * - at each node Coopr's greedy fill of the remaining layouts is tried first: it is the greatest completion
 *   that respects the maxima, so when it also meets the minima it is the answer (the usual case, at no LP cost);
 * - at each node the LP relaxation of the rest of the problem (total = remaining machines; for every counted
 *   service, its residual min ≤ nodes holding it ≤ residual max; layouts with the same counted services share
 *   one column) bounds the current layout's count from above and below; an infeasible relaxation cuts the
 *   whole subtree (most infeasible requests are proven at the root this way);
 * - states already proven infeasible (layout index, remaining machines, residual bounds) are remembered.
 */
import { solveLp, type LpRow } from "./lp.js";

export interface CountProblem {
  /** Machines to place. */
  n: number;
  /** Per counted service, the minimum number of nodes holding it. */
  min: readonly number[];
  /** Per counted service, the maximum (Infinity allowed). */
  max: readonly number[];
  /** Per layout in preference order, the counted services it holds (indices into min/max). */
  layouts: readonly (readonly number[])[];
}

export type CountResult =
  | { status: "found"; counts: number[] }
  | { status: "infeasible" }
  /** The step allowance ran out (only when `spend` returned false). */
  | { status: "unknown" };

const ABORT = Symbol("abort");
const ROUND_EPS = 1e-6;

/**
 * Finds the lexicographically greatest count vector. `spend(steps)` is called for every search node and LP
 * pivot; it may throw (the caller's budget error propagates) or return false (the search answers "unknown").
 */
export function searchCounts(problem: CountProblem, spend: (steps: number) => boolean): CountResult {
  try {
    return search(problem, (steps) => {
      if (!spend(steps)) throw ABORT;
    });
  } catch (err) {
    if (err === ABORT) return { status: "unknown" };
    throw err;
  }
}

function search(problem: CountProblem, tick: (steps: number) => void): CountResult {
  return new CountSearch(problem, tick).run();
}

/** Services (counted indexes) of each class of layouts with the same counted services, and its last layout. */
interface LayoutClasses {
  services: (readonly number[])[];
  lastLayout: number[];
}

/** Layouts with the same counted services form a class: one LP column for the rest of the search. */
function layoutClasses(layouts: readonly (readonly number[])[]): LayoutClasses {
  const classes: LayoutClasses = { services: [], lastLayout: [] };
  const classOfKey = new Map<string, number>();
  layouts.forEach((services, i) => {
    const key = [...services].sort((a, b) => a - b).join(",");
    let c = classOfKey.get(key);
    if (c === undefined) {
      c = classes.services.length;
      classOfKey.set(key, c);
      classes.services.push(services);
      classes.lastLayout.push(i);
    }
    classes.lastLayout[c] = i;
  });
  return classes;
}

/** The result of visiting a search node: a complete vector, a dead end, or the range of counts to try. */
type Visit = "done" | "fail" | { most: number; least: number };

class CountSearch {
  private readonly layouts: readonly (readonly number[])[];
  private readonly serviceCount: number;
  private readonly layoutCount: number;
  private readonly minNodes: Int32Array;
  /** Per counted service, its max capped at the machine count. */
  private readonly maxNodes: number[];
  private readonly classes: LayoutClasses;
  /** Nodes holding each counted service so far. */
  private readonly nodesWith: Float64Array;
  /** The count vector being built (complete when the search answers "found"). */
  private readonly layoutCounts: Int32Array;
  /** Per layout, the smallest count left to try at this prefix. */
  private readonly leastCounts: Int32Array;
  /** Keys of states proven infeasible. */
  private readonly failed = new Set<string>();
  private machinesLeft: number;

  constructor(
    problem: CountProblem,
    private readonly tick: (steps: number) => void,
  ) {
    this.layouts = problem.layouts;
    this.serviceCount = problem.min.length;
    this.layoutCount = problem.layouts.length;
    this.minNodes = Int32Array.from(problem.min);
    this.maxNodes = problem.max.map((m) => Math.min(m, problem.n));
    this.classes = layoutClasses(problem.layouts);
    this.nodesWith = new Float64Array(this.serviceCount);
    this.layoutCounts = new Int32Array(this.layoutCount);
    this.leastCounts = new Int32Array(this.layoutCount);
    this.machinesLeft = problem.n;
  }

  run(): CountResult {
    for (let k = 0; k < this.serviceCount; k++) if (this.minNodes[k]! > this.maxNodes[k]!) return { status: "infeasible" };
    const counts = this.layoutCounts;
    let i = 0;
    for (;;) {
      const visit = this.visit(i);
      if (visit === "done") return { status: "found", counts: Array.from(counts) };
      if (visit !== "fail") {
        counts[i] = visit.most;
        this.leastCounts[i] = visit.least;
        this.place(i, visit.most);
        i++;
        continue;
      }
      // Backtrack to the deepest layout that still has a smaller count to try.
      for (;;) {
        i--;
        if (i < 0) return { status: "infeasible" };
        this.place(i, -counts[i]!);
        if (counts[i]! > this.leastCounts[i]!) {
          counts[i]!--;
          this.place(i, counts[i]!);
          i++;
          break;
        }
        this.failed.add(this.stateKey(i));
      }
    }
  }

  /** Nodes counted service k still needs. */
  private stillNeeded(k: number): number {
    return Math.max(0, this.minNodes[k]! - this.nodesWith[k]!);
  }

  /** Nodes counted service k may still get. */
  private stillAllowed(k: number): number {
    return Math.min(this.maxNodes[k]! - this.nodesWith[k]!, this.machinesLeft);
  }

  private stateKey(i: number): string {
    let key = `${i}|${this.machinesLeft}`;
    for (let k = 0; k < this.serviceCount; k++) key += `|${this.stillNeeded(k)},${this.stillAllowed(k)}`;
    return key;
  }

  /** Adds `count` machines (negative: removes them) of layout i. */
  private place(i: number, count: number): void {
    for (const k of this.layouts[i]!) this.nodesWith[k]! += count;
    this.machinesLeft -= count;
  }

  /**
   * Coopr's greedy fill from layout i on: each layout takes as many machines as its services' maxima allow.
   * It is the greatest completion (lexicographically) that respects the maxima, so when it is valid it is the
   * answer for this prefix. Writes into the count vector and returns true when valid.
   */
  private greedyFill(i: number): boolean {
    this.tick(1 + ((this.layoutCount - i) >> 5));
    const filled = Float64Array.from(this.nodesWith);
    let left = this.machinesLeft;
    for (let j = i; j < this.layoutCount; j++) {
      let take = left;
      for (const k of this.layouts[j]!) take = Math.min(take, this.maxNodes[k]! - filled[k]!);
      if (take < 0) take = 0;
      this.layoutCounts[j] = take;
      left -= take;
      for (const k of this.layouts[j]!) filled[k]! += take;
    }
    if (left !== 0) return false;
    for (let k = 0; k < this.serviceCount; k++) if (filled[k]! < this.minNodes[k]!) return false;
    return true;
  }

  /** Evaluates the search node at layout i. */
  private visit(i: number): Visit {
    this.tick(1);
    if (this.machinesLeft === 0) {
      for (let k = 0; k < this.serviceCount; k++) if (this.stillNeeded(k) > 0) return "fail";
      for (let j = i; j < this.layoutCount; j++) this.layoutCounts[j] = 0;
      return "done";
    }
    if (i === this.layoutCount) return "fail";
    const key = this.stateKey(i);
    if (this.failed.has(key)) return "fail";
    if (this.greedyFill(i)) return "done";
    const range = this.lpRange(i);
    if (range === undefined) {
      this.failed.add(key);
      return "fail";
    }
    return range;
  }

  /**
   * The range of counts for layout i from the LP relaxation of the remaining problem, or undefined when it is
   * infeasible. Layouts holding a service already at its max are left out (their count is 0), and layouts that
   * hold the same binding services share one column.
   */
  private lpRange(i: number): { most: number; least: number } | undefined {
    const left = this.machinesLeft;
    const isBinding: boolean[] = [];
    for (let k = 0; k < this.serviceCount; k++) {
      const needed = this.stillNeeded(k);
      const allowed = this.stillAllowed(k);
      if (needed > left || allowed < 0) return undefined;
      isBinding.push(needed > 0 || allowed < left);
    }
    let most = left;
    for (const k of this.layouts[i]!) most = Math.min(most, this.maxNodes[k]! - this.nodesWith[k]!);
    if (most <= 0) return { most: 0, least: 0 }; // a service of layout i is at its max; the next node checks the rest
    // Column 0 is layout i; then one column per set of binding services of the later classes.
    const columnsOfService: number[][] = Array.from({ length: this.serviceCount }, () => []);
    for (const k of this.layouts[i]!) if (isBinding[k]) columnsOfService[k]!.push(0);
    const columnOfSignature = new Map<string, number>();
    for (let c = 0; c < this.classes.services.length; c++) {
      if (this.classes.lastLayout[c]! <= i) continue;
      const services = this.classes.services[c]!;
      if (services.some((k) => this.stillAllowed(k) <= 0)) continue;
      const signature = services.filter((k) => isBinding[k]).join(",");
      if (columnOfSignature.has(signature)) continue;
      const column = columnOfSignature.size + 1;
      columnOfSignature.set(signature, column);
      for (const k of services) if (isBinding[k]) columnsOfService[k]!.push(column);
    }
    const columnCount = columnOfSignature.size + 1;
    const rows: LpRow[] = [{ columns: Array.from({ length: columnCount }, (_, j) => j), lo: left, hi: left }];
    for (let k = 0; k < this.serviceCount; k++) {
      if (!isBinding[k]) continue;
      if (columnsOfService[k]!.length === 0) {
        if (this.stillNeeded(k) > 0) return undefined;
        continue;
      }
      rows.push({ columns: columnsOfService[k]!, lo: this.stillNeeded(k), hi: this.stillAllowed(k) });
    }
    if (columnCount === 1) {
      // No later layout can take machines: layout i takes them all.
      if (left > most) return undefined;
      for (let k = 0; k < this.serviceCount; k++) {
        if ((columnsOfService[k]!.length > 0 ? left : 0) < this.stillNeeded(k)) return undefined;
      }
      return { most: left, least: left };
    }
    if (rows.length === 1) return { most, least: 0 }; // nothing binds: the later layouts can take any remainder
    const objective = new Array<number>(columnCount).fill(0);
    objective[0] = 1;
    const upper = solveLp({ numColumns: columnCount, rows, objective }, this.tick);
    if (upper.status !== "optimal") return undefined;
    const hi = Math.min(most, Math.floor(upper.value + ROUND_EPS));
    if (hi <= 0) return hi < 0 ? undefined : { most: 0, least: 0 };
    objective[0] = -1;
    const lower = solveLp({ numColumns: columnCount, rows, objective }, this.tick);
    if (lower.status !== "optimal") return undefined;
    const lo = Math.max(0, Math.ceil(-lower.value - ROUND_EPS));
    return hi < lo ? undefined : { most: hi, least: lo };
  }
}
