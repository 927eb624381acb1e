/**
 * Unit tests of the count search (an internal module): lexicographically greatest count vector vs a plain
 * enumeration, on arbitrary problems and on odd-cycle gadgets whose LP relaxation is fractional (they force
 * the search below the LP's bound), and step counts of infeasibility proofs (deterministic, not timed).
 */
import test from "ava";
import fc from "fast-check";
import { searchCounts, type CountProblem } from "@corral/solver/testing";

/** Every vector with sum n in descending lexicographic order; the first valid one. */
function brute(p: CountProblem): number[] | null {
  const K = p.min.length;
  const L = p.layouts.length;
  const x = new Array<number>(L).fill(0);
  const c = new Array<number>(K).fill(0);
  const walk = (i: number, rest: number): boolean => {
    if (i === L) return rest === 0 && c.every((v, k) => v >= p.min[k]! && v <= p.max[k]!);
    for (let v = rest; v >= 0; v--) {
      x[i] = v;
      for (const k of p.layouts[i]!) c[k]! += v;
      // Sound cuts only: counts never shrink, and a service gains at most the machines left.
      const hopeless = c.some((count, k) => count > p.max[k]! || count + rest - v < p.min[k]!);
      const found = !hopeless && walk(i + 1, rest - v);
      for (const k of p.layouts[i]!) c[k]! -= v;
      if (found) return true;
    }
    x[i] = 0;
    return false;
  };
  return walk(0, p.n) ? [...x] : null;
}

function run(p: CountProblem): { counts: number[] | null; steps: number } {
  let steps = 0;
  const r = searchCounts(p, (s) => {
    steps += s;
    return true;
  });
  if (r.status === "unknown") throw new Error("unexpected unknown");
  return { counts: r.status === "found" ? r.counts : null, steps };
}

const problemArb = fc
  .record({
    K: fc.integer({ min: 1, max: 5 }),
    L: fc.integer({ min: 1, max: 8 }),
    n: fc.integer({ min: 1, max: 9 }),
  })
  .chain(({ K, L, n }) =>
    fc.record({
      n: fc.constant(n),
      min: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: K, maxLength: K }),
      slack: fc.array(fc.oneof(fc.constant(Infinity), fc.constant(0), fc.integer({ min: 0, max: 3 })), { minLength: K, maxLength: K }),
      layouts: fc.array(fc.subarray(Array.from({ length: K }, (_, k) => k)), { minLength: L, maxLength: L }),
    }),
  )
  .map(({ n, min, slack, layouts }): CountProblem => ({ n, min, max: min.map((m, k) => m + slack[k]!), layouts }));

test("count search - agrees with plain enumeration on arbitrary problems", (t) => {
  fc.assert(
    fc.property(problemArb, (p) => {
      t.deepEqual(run(p).counts, brute(p));
    }),
    { numRuns: 3000, seed: 99 },
  );
});

/**
 * Odd-cycle gadget: a, b, c must each reach an exact count through the pair layouts {a,b}, {b,c}, {a,c}; an
 * earlier "shifter" layout {a,d} changes a's parity. With the shifter at its LP maximum the rest is LP-feasible
 * but has no integer solution, so the search must go below the LP bound.
 */
const gadgetArb = fc
  .record({
    a: fc.integer({ min: 1, max: 4 }),
    b: fc.integer({ min: 1, max: 3 }),
    c: fc.integer({ min: 1, max: 3 }),
    dMax: fc.integer({ min: 1, max: 3 }),
    free: fc.boolean(),
    extraN: fc.integer({ min: 0, max: 4 }),
    order: fc.shuffledSubarray([1, 2, 3], { minLength: 3, maxLength: 3 }),
    noise: fc.array(fc.subarray([0, 1, 2, 3]), { maxLength: 2 }),
  })
  .map(({ a, b, c, dMax, free, extraN, order, noise }): CountProblem => {
    const pairs: Record<number, number[]> = { 1: [0, 1], 2: [1, 2], 3: [0, 2] };
    return {
      n: Math.ceil((a + b + c) / 2) + extraN,
      min: [a, b, c, 0],
      max: [a, b, c, dMax],
      layouts: [[0, 3], ...order.map((o) => pairs[o]!), ...noise, ...(free ? [[]] : [])],
    };
  });

test("count search - odd-cycle gadgets: below the LP bound, still the preferred vector", (t) => {
  const hand: CountProblem = { n: 4, min: [2, 1, 1, 0], max: [2, 1, 1, 1], layouts: [[0, 3], [0, 1], [1, 2], [0, 2], []] };
  t.deepEqual(run(hand).counts, [0, 1, 0, 1, 2]);
  let feasible = 0;
  fc.assert(
    fc.property(gadgetArb, (p) => {
      const expected = brute(p);
      if (expected !== null) feasible++;
      t.deepEqual(run(p).counts, expected);
    }),
    { numRuns: 1500, seed: 5 },
  );
  t.true(feasible > 200);
});

test("count search - Coopr's slow infeasible requests are proven with few steps", (t) => {
  // L layouts, one service with min >= 1 that no layout holds: Coopr's exhaustive search takes 24 s (L=6,
  // n=100) and 254 s (L=8, n=60) to find that there is no layout.
  for (const L of [6, 7, 8]) {
    for (const n of [60, 80, 100]) {
      const layouts = Array.from({ length: L }, (_, i) => [i % 3]);
      const r = run({ n, min: [0, 1, 2, 1], max: [n, 50, Infinity, 5], layouts });
      t.is(r.counts, null);
      t.true(r.steps < 50, `L=${L} n=${n}: ${r.steps} steps`);
      // Two minimums that never share a layout and do not fit together.
      const pairs = run({ n, min: [n - 10, 11], max: [Infinity, Infinity], layouts: Array.from({ length: L }, (_, i) => [i % 2]) });
      t.is(pairs.counts, null);
      t.true(pairs.steps < 50, `pairs L=${L} n=${n}: ${pairs.steps} steps`);
    }
  }
});

test("count search - a step allowance that runs out answers unknown", (t) => {
  let left = 3;
  const r = searchCounts({ n: 50, min: [2, 1, 1, 0], max: [2, 1, 1, 1], layouts: [[0, 3], [0, 1], [1, 2], [0, 2], []] }, () => left-- > 0);
  t.deepEqual(r, { status: "unknown" });
});
