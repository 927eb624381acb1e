/**
 * The quantity bounds behind an infeasible LP relaxation of a count problem, read from the LP's Farkas
 * certificate: those bounds alone, with "sum = n", admit no fractional solution, let alone an integer one.
 */
import type { CountProblem } from "../count-search.js";
import { solveLp, type LpRow } from "../lp.js";

/** A quantity bound of a count problem: the min or the max of counted service k. */
export interface QuantityBound {
  k: number;
  kind: "min" | "max";
}

/**
 * When the LP relaxation of the whole problem is infeasible, the quantity bounds its Farkas certificate uses;
 * otherwise undefined. Costs one LP, whose columns are the layouts merged by the bounded services they hold.
 * `spend(steps)` is called for every pivot.
 */
export function lpConflict(problem: CountProblem, spend: (steps: number) => void): QuantityBound[] | undefined {
  const { n: machines, min, layouts } = problem;
  const serviceCount = min.length;
  const max = problem.max.map((m) => Math.min(m, machines));
  const minsAboveMachines: QuantityBound[] = [];
  for (let k = 0; k < serviceCount; k++) {
    if (min[k]! > max[k]!) return [{ k, kind: "min" }, { k, kind: "max" }];
    if (min[k]! > machines) minsAboveMachines.push({ k, kind: "min" });
  }
  if (minsAboveMachines.length > 0) return minsAboveMachines.slice(0, 1);
  const isBinding = Array.from({ length: serviceCount }, (_, k) => min[k]! > 0 || max[k]! < machines);
  // One column per set of binding services a layout holds.
  const columnsOfService: number[][] = Array.from({ length: serviceCount }, () => []);
  const columnOfSignature = new Map<string, number>();
  for (const services of layouts) {
    const signature = services.filter((k) => isBinding[k]).sort((a, b) => a - b);
    const key = signature.join(",");
    if (columnOfSignature.has(key)) continue;
    columnOfSignature.set(key, columnOfSignature.size);
    for (const k of signature) columnsOfService[k]!.push(columnOfSignature.size - 1);
  }
  const columnCount = columnOfSignature.size;
  const rows: LpRow[] = [{ columns: Array.from({ length: columnCount }, (_, j) => j), lo: machines, hi: machines }];
  const serviceOfRow: number[] = [-1];
  for (let k = 0; k < serviceCount; k++) {
    if (!isBinding[k]) continue;
    if (columnsOfService[k]!.length === 0) {
      if (min[k]! > 0) return [{ k, kind: "min" }];
      continue;
    }
    rows.push({ columns: columnsOfService[k]!, lo: min[k]!, hi: max[k]! });
    serviceOfRow.push(k);
  }
  if (columnCount === 0) return [];
  const result = solveLp({ numColumns: columnCount, rows, objective: new Array<number>(columnCount).fill(0) }, spend);
  if (result.status !== "infeasible") return undefined;
  const bounds: QuantityBound[] = [];
  for (const ref of result.conflict) {
    const k = serviceOfRow[ref.row]!;
    if (k < 0) continue; // the "sum = n" row is not a bound
    const kind = ref.side === "lo" ? "min" : "max";
    if ((kind === "min" && min[k]! > 0) || (kind === "max" && max[k]! < machines)) bounds.push({ k, kind });
  }
  return bounds;
}
