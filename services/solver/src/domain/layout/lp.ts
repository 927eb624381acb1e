/**
 * A small two-phase revised simplex for the LP relaxation of the count search: maximise c·x subject to rows
 * `lo ≤ a·x ≤ hi` and x ≥ 0, where every coefficient is 0 or 1. Rows are few (one per bounded service, plus
 * the total) and columns may be many (one per class of node layouts), so the basis inverse is kept explicitly
 * (rows × rows) and columns are priced sparsely. Dantzig's rule, with Bland's rule after a run of degenerate pivots
 * so it cannot cycle. The relaxation is only used to prune: an infeasible relaxation proves the integer problem
 * infeasible, and its phase-1 multipliers name the bounds that clash.
 */

export interface LpRow {
  /** Column indices with coefficient 1. */
  columns: readonly number[];
  lo: number;
  hi: number;
}

export interface LpProblem {
  numColumns: number;
  rows: readonly LpRow[];
  /** Objective coefficients (length numColumns); maximised. */
  objective: readonly number[];
}

/** A row bound used by an infeasibility certificate: `lo` (a·x ≥ lo) or `hi` (a·x ≤ hi) of `rows[row]`. */
export interface LpBoundRef {
  row: number;
  side: "lo" | "hi";
}

export type LpResult =
  | {
      status: "infeasible";
      /**
       * The row bounds with a non-zero multiplier in the phase-1 Farkas certificate: those bounds alone (with
       * x ≥ 0) are already infeasible.
       */
      conflict: LpBoundRef[];
    }
  | { status: "unbounded" }
  | { status: "optimal"; value: number };

const EPS = 1e-9;
const FEASIBILITY_EPS = 1e-6;

/** Solves `problem`, calling `spend(cost)` for every pivot (it may throw to abort). */
export function solveLp(problem: LpProblem, spend: (cost: number) => void): LpResult {
  // Standard form: a row per finite bound; ≤ rows get a slack, ≥ rows a surplus and an artificial, = rows an
  // artificial. Starting basis: the slacks and artificials (the identity).
  for (const [origin, row] of problem.rows.entries()) {
    if (row.hi < 0 || row.hi < row.lo) {
      return { status: "infeasible", conflict: [{ row: origin, side: "hi" }, { row: origin, side: "lo" }] };
    }
  }
  type StdRow = { sense: "le" | "ge" | "eq"; rhs: number; origin: number };
  const standardRows: StdRow[] = [];
  const rowsOfColumn: number[][] = Array.from({ length: problem.numColumns }, () => []);
  problem.rows.forEach((row, origin) => {
    const add = (sense: StdRow["sense"], rhs: number) => {
      for (const c of row.columns) rowsOfColumn[c]!.push(standardRows.length);
      standardRows.push({ sense, rhs, origin });
    };
    if (row.lo === row.hi) add("eq", row.lo);
    else {
      if (row.hi !== Infinity) add("le", row.hi);
      if (row.lo > 0) add("ge", row.lo);
    }
  });
  const rowCount = standardRows.length;
  const structuralCount = problem.numColumns;
  // Columns: structural 0..n-1, then one auxiliary per row (slack or surplus), then artificials.
  const columnRows: number[][] = [...rowsOfColumn];
  const columnSign: number[] = new Array<number>(structuralCount).fill(1);
  const auxOf = new Int32Array(rowCount).fill(-1);
  const artificialOf = new Int32Array(rowCount).fill(-1);
  standardRows.forEach((row, i) => {
    if (row.sense === "eq") return;
    auxOf[i] = columnRows.length;
    columnRows.push([i]);
    columnSign.push(row.sense === "le" ? 1 : -1);
  });
  const firstArtificial = columnRows.length;
  standardRows.forEach((row, i) => {
    if (row.sense === "le") return;
    artificialOf[i] = columnRows.length;
    columnRows.push([i]);
    columnSign.push(1);
  });
  const numColumns = columnRows.length;
  let nnz = 0;
  for (const rows of columnRows) nnz += rows.length;
  const pivotCost = 1 + ((rowCount * rowCount + nnz) >> 8);

  const basisInverse: Float64Array[] = Array.from({ length: rowCount }, (_, i) => {
    const row = new Float64Array(rowCount);
    row[i] = 1;
    return row;
  });
  const basicValues = Float64Array.from(standardRows, (row) => row.rhs);
  const basis = new Int32Array(rowCount);
  const isBasic = new Uint8Array(numColumns);
  standardRows.forEach((row, i) => {
    basis[i] = row.sense === "le" ? auxOf[i]! : artificialOf[i]!;
    isBasic[basis[i]!] = 1;
  });

  const duals = (cost: Float64Array): Float64Array => {
    const prices = new Float64Array(rowCount);
    for (let i = 0; i < rowCount; i++) {
      const cb = cost[basis[i]!]!;
      if (cb === 0) continue;
      const row = basisInverse[i]!;
      for (let k = 0; k < rowCount; k++) prices[k]! += cb * row[k]!;
    }
    return prices;
  };
  const reducedCost = (cost: Float64Array, prices: Float64Array, j: number): number => {
    let d = cost[j]!;
    const sign = columnSign[j]!;
    for (const i of columnRows[j]!) d -= prices[i]! * sign;
    return d;
  };
  const direction = (j: number): Float64Array => {
    const enteringColumn = new Float64Array(rowCount);
    const sign = columnSign[j]!;
    for (const k of columnRows[j]!) for (let i = 0; i < rowCount; i++) enteringColumn[i]! += basisInverse[i]![k]! * sign;
    return enteringColumn;
  };
  const pivot = (r: number, j: number, enteringColumn: Float64Array): void => {
    spend(pivotCost);
    const theta = basicValues[r]! / enteringColumn[r]!;
    const pivotRow = basisInverse[r]!;
    const a = enteringColumn[r]!;
    for (let k = 0; k < rowCount; k++) pivotRow[k]! /= a;
    for (let i = 0; i < rowCount; i++) {
      if (i === r) continue;
      const f = enteringColumn[i]!;
      if (f === 0) continue;
      basicValues[i]! -= theta * f;
      const row = basisInverse[i]!;
      for (let k = 0; k < rowCount; k++) row[k]! -= f * pivotRow[k]!;
    }
    basicValues[r] = theta;
    isBasic[basis[r]!] = 0;
    basis[r] = j;
    isBasic[j] = 1;
  };

  /** Maximises cost·x over the current basis; columns ≥ `limit` never enter. False when unbounded. */
  const iterate = (cost: Float64Array, limit: number): boolean => {
    let degenerate = 0;
    for (;;) {
      const bland = degenerate > 2 * rowCount + 10;
      const prices = duals(cost);
      let entering = -1;
      let best = EPS;
      for (let j = 0; j < limit; j++) {
        if (isBasic[j]) continue;
        const d = reducedCost(cost, prices, j);
        if (d > best) {
          entering = j;
          if (bland) break;
          best = d;
        }
      }
      if (entering < 0) return true;
      const enteringColumn = direction(entering);
      let r = -1;
      let ratio = Infinity;
      for (let i = 0; i < rowCount; i++) {
        const a = enteringColumn[i]!;
        if (a <= EPS) continue;
        const q = basicValues[i]! / a;
        if (q < ratio - EPS || (Math.abs(q - ratio) <= EPS && basis[i]! < basis[r]!)) {
          ratio = q;
          r = i;
        }
      }
      if (r < 0) return false;
      degenerate = ratio <= EPS ? degenerate + 1 : 0;
      pivot(r, entering, enteringColumn);
    }
  };

  if (firstArtificial < numColumns) {
    const phase1 = new Float64Array(numColumns);
    for (let j = firstArtificial; j < numColumns; j++) phase1[j] = -1;
    iterate(phase1, numColumns);
    let infeasibility = 0;
    for (let i = 0; i < rowCount; i++) if (basis[i]! >= firstArtificial) infeasibility += basicValues[i]!;
    let scale = 1;
    for (const row of standardRows) scale = Math.max(scale, row.rhs);
    if (infeasibility > FEASIBILITY_EPS * scale) {
      // prices = c_B B⁻¹ of the phase-1 optimum is a Farkas certificate; rows with a zero price take no part in it.
      const prices = duals(phase1);
      const conflict: LpBoundRef[] = [];
      standardRows.forEach((row, i) => {
        if (Math.abs(prices[i]!) <= EPS) return;
        if (row.sense !== "ge") conflict.push({ row: row.origin, side: "hi" });
        if (row.sense !== "le") conflict.push({ row: row.origin, side: "lo" });
      });
      return { status: "infeasible", conflict };
    }
    // Drive artificials (at zero) out of the basis; a row where no other column can replace one is redundant,
    // and its artificial stays at zero whatever enters later.
    for (let r = 0; r < rowCount; r++) {
      if (basis[r]! < firstArtificial) continue;
      for (let j = 0; j < firstArtificial; j++) {
        if (isBasic[j]) continue;
        const enteringColumn = direction(j);
        if (Math.abs(enteringColumn[r]!) > EPS) {
          pivot(r, j, enteringColumn);
          break;
        }
      }
    }
  }
  const phase2 = new Float64Array(numColumns);
  problem.objective.forEach((c, j) => (phase2[j] = c));
  if (!iterate(phase2, firstArtificial)) return { status: "unbounded" };
  let value = 0;
  for (let i = 0; i < rowCount; i++) value += phase2[basis[i]!]! * basicValues[i]!;
  return { status: "optimal", value };
}
