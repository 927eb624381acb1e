/**
 * The count search: how many nodes get each node layout. Coopr returns the lexicographically greatest
 * valid count vector in preference order (reference coopr-algorithms.md 2.4), found by a greedy start and
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
  const { n, layouts } = problem;
  const K = problem.min.length;
  const L = layouts.length;
  const min = Int32Array.from(problem.min);
  const max = problem.max.map((m) => Math.min(m, n));
  for (let k = 0; k < K; k++) if (min[k]! > max[k]!) return { status: "infeasible" };

  // Layouts with the same counted services form a class: one LP column for the suffix.
  const classServices: (readonly number[])[] = [];
  const lastIndex: number[] = [];
  const classKey = new Map<string, number>();
  layouts.forEach((services, i) => {
    const key = [...services].sort((a, b) => a - b).join(",");
    let c = classKey.get(key);
    if (c === undefined) {
      c = classServices.length;
      classKey.set(key, c);
      classServices.push(services);
      lastIndex.push(i);
    }
    lastIndex[c] = i;
  });

  const count = new Float64Array(K); // nodes holding each counted service so far
  const x = new Int32Array(L);
  const low = new Int32Array(L);
  const failed = new Set<string>();
  let r = n;

  const residualLo = (k: number): number => Math.max(0, min[k]! - count[k]!);
  const residualHi = (k: number): number => Math.min(max[k]! - count[k]!, r);
  const stateKey = (i: number): string => {
    let key = `${i}|${r}`;
    for (let k = 0; k < K; k++) key += `|${residualLo(k)},${residualHi(k)}`;
    return key;
  };
  const apply = (i: number, v: number): void => {
    for (const k of layouts[i]!) count[k]! += v;
    r -= v;
  };

  /**
   * Coopr's greedy fill from layout i on: each layout takes as many machines as its services' maxima allow.
   * It is the greatest completion (lexicographically) that respects the maxima, so when it is valid it is the
   * answer for this prefix. Writes into x and returns true when valid.
   */
  const greedy = (i: number): boolean => {
    tick(1 + ((L - i) >> 5));
    const c = Float64Array.from(count);
    let rest = r;
    for (let j = i; j < L; j++) {
      let v = rest;
      for (const k of layouts[j]!) v = Math.min(v, max[k]! - c[k]!);
      if (v < 0) v = 0;
      x[j] = v;
      rest -= v;
      for (const k of layouts[j]!) c[k]! += v;
    }
    if (rest !== 0) return false;
    for (let k = 0; k < K; k++) if (c[k]! < min[k]!) return false;
    return true;
  };

  /** Evaluates the node at layout i: "done" (x is complete), "fail", or the [high, low] range for x[i]. */
  const enter = (i: number): "done" | "fail" | [number, number] => {
    tick(1);
    if (r === 0) {
      for (let k = 0; k < K; k++) if (residualLo(k) > 0) return "fail";
      for (let j = i; j < L; j++) x[j] = 0;
      return "done";
    }
    if (i === L) return "fail";
    const key = stateKey(i);
    if (failed.has(key)) return "fail";
    if (greedy(i)) return "done";
    const range = bounds(i);
    if (range === undefined) {
      failed.add(key);
      return "fail";
    }
    return range;
  };

  /**
   * Bounds for x[i] from the LP relaxation of the remaining problem, or undefined when it is infeasible.
   * Layouts holding a service already at its max are left out (their count is 0), and layouts that hold the
   * same binding services share one column.
   */
  const bounds = (i: number): [number, number] | undefined => {
    const binding: boolean[] = [];
    for (let k = 0; k < K; k++) {
      const lo = residualLo(k);
      const hi = residualHi(k);
      if (lo > r || hi < 0) return undefined;
      binding.push(lo > 0 || hi < r);
    }
    let high = r;
    for (const k of layouts[i]!) high = Math.min(high, max[k]! - count[k]!);
    if (high <= 0) return [0, 0]; // a service of layout i is at its max; the next node checks the rest
    const columnsOf: number[][] = Array.from({ length: K }, () => []);
    for (const k of layouts[i]!) if (binding[k]) columnsOf[k]!.push(0);
    const merged = new Map<string, number>();
    for (let c = 0; c < classServices.length; c++) {
      if (lastIndex[c]! <= i) continue;
      const services = classServices[c]!;
      if (services.some((k) => residualHi(k) <= 0)) continue;
      const sig = services.filter((k) => binding[k]).join(",");
      if (merged.has(sig)) continue;
      const column = merged.size + 1;
      merged.set(sig, column);
      for (const k of services) if (binding[k]) columnsOf[k]!.push(column);
    }
    const numColumns = merged.size + 1;
    const rows: LpRow[] = [{ columns: Array.from({ length: numColumns }, (_, j) => j), lo: r, hi: r }];
    for (let k = 0; k < K; k++) {
      if (!binding[k]) continue;
      if (columnsOf[k]!.length === 0) {
        if (residualLo(k) > 0) return undefined;
        continue;
      }
      rows.push({ columns: columnsOf[k]!, lo: residualLo(k), hi: residualHi(k) });
    }
    if (numColumns === 1) {
      // No later layout can take machines: layout i takes them all.
      if (r > high) return undefined;
      for (let k = 0; k < K; k++) if ((columnsOf[k]!.length > 0 ? r : 0) < residualLo(k)) return undefined;
      return [r, r];
    }
    if (rows.length === 1) return [high, 0]; // nothing binds: the later layouts can take any remainder
    const objective = new Array<number>(numColumns).fill(0);
    objective[0] = 1;
    const upper = solveLp({ numColumns, rows, objective }, tick);
    if (upper.status !== "optimal") return undefined;
    const hi = Math.min(high, Math.floor(upper.value + ROUND_EPS));
    if (hi <= 0) return hi < 0 ? undefined : [0, 0];
    objective[0] = -1;
    const lower = solveLp({ numColumns, rows, objective }, tick);
    if (lower.status !== "optimal") return undefined;
    const lo = Math.max(0, Math.ceil(-lower.value - ROUND_EPS));
    return hi < lo ? undefined : [hi, lo];
  };

  let i = 0;
  for (;;) {
    const outcome = enter(i);
    if (outcome === "done") return { status: "found", counts: Array.from(x) };
    if (outcome !== "fail") {
      x[i] = outcome[0];
      low[i] = outcome[1];
      apply(i, outcome[0]);
      i++;
      continue;
    }
    // Backtrack to the deepest layout that still has a smaller count to try.
    for (;;) {
      i--;
      if (i < 0) return { status: "infeasible" };
      apply(i, -x[i]!);
      if (x[i]! > low[i]!) {
        x[i]!--;
        apply(i, x[i]!);
        i++;
        break;
      }
      failed.add(stateKey(i));
    }
  }
}
