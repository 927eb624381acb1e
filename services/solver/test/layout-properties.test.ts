/**
 * Property tests of the layout solver against a brute-force enumerator of Coopr's rules (docs/catalog.md,
 * Layout): Coopr's node layouts by plain 2^m subset enumeration, its comparator, and every count vector in
 * descending lexicographic order. Coopr's answer is the first valid vector; Coopr itself
 * sometimes misses it (greedy false negatives), the solver must not.
 */
import test from "ava";
import fc from "fast-check";
import {
  isCorralError,
  type ClusterTemplate,
  type MachineType,
  type Service,
  type LayoutRequest,
  type LayoutSolution,
} from "@corral/contracts";
import { solveLayout, SOLVER_BUDGET_EXHAUSTED } from "@corral/solver";

const PROVIDER = "p";
const POOL = ["a", "b", "c", "d", "e", "f"];
const HW = ["h-large", "h1", "medium"];
const IMG = ["centos", "ubuntu"];

const service = (name: string): Service => ({
  name,
  dependencies: { provides: [], conflicts: [], install: { requires: [], uses: [] }, runtime: { requires: [], uses: [] } },
  provisioner: { actions: {} },
});

interface Instance {
  request: LayoutRequest;
  requireEvery: boolean;
}

// ---------------------------------------------------------------------------------------------------------------
// Random instances

const subsetOf = <T>(items: readonly T[], min = 0, max = items.length) =>
  fc.subarray([...items], { minLength: min, maxLength: max });

function instanceArb(opts: { maxServices: number; maxMachines: number }): fc.Arbitrary<Instance> {
  const serviceConstraint = fc.record(
    {
      // A third of the bounds absent, so some constrained services carry no quantity bound at all.
      min: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined, freq: 3 }),
      max: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined, freq: 3 }),
      hardwaretypes: subsetOf(HW, 0, 2),
      imagetypes: subsetOf(IMG, 0, 1),
    },
    { requiredKeys: ["min", "max"] },
  );
  return fc
    .record({
      requested: subsetOf(POOL.slice(0, opts.maxServices), 1),
      must: fc.array(subsetOf(POOL.slice(0, opts.maxServices), 2, 3), { maxLength: 2 }),
      cant: fc.array(subsetOf(POOL.slice(0, opts.maxServices), 2, 3), { maxLength: 2 }),
      constrainedNames: subsetOf(POOL.slice(0, opts.maxServices)),
      constraintsList: fc.array(serviceConstraint, { minLength: 6, maxLength: 6 }),
      hwTypes: subsetOf(HW, 1),
      hwWithoutFlavor: subsetOf(HW, 0, 1),
      imgTypes: subsetOf(IMG, 1),
      compatHw: fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: subsetOf(HW, 1) }),
      defaultHw: fc.oneof(
        { weight: 4, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom(...HW) },
      ),
      n: fc.integer({ min: 1, max: opts.maxMachines }),
      requireEvery: fc.boolean(),
    })
    .map((r): Instance => {
      const services: Record<string, { hardwaretypes?: string[]; imagetypes?: string[]; quantities?: { min?: number; max?: number } }> = {};
      r.constrainedNames.forEach((name, i) => {
        const c = r.constraintsList[i]!;
        const quantities: { min?: number; max?: number } = {};
        if (c.min !== undefined) quantities.min = c.min;
        if (c.max !== undefined) quantities.max = c.max;
        services[name] = { hardwaretypes: c.hardwaretypes, imagetypes: c.imagetypes, quantities };
      });
      const template: ClusterTemplate = {
        name: "t",
        compatibility: { hardwaretypes: [...r.compatHw], imagetypes: [], services: [] },
        defaults: {
          services: r.requested,
          provider: PROVIDER,
          config: {},
          ...(r.defaultHw === undefined ? {} : { hardwaretype: r.defaultHw }),
        },
        constraints: { layout: { mustcoexist: r.must, cantcoexist: r.cant }, services },
      };
      const hardwareTypes: MachineType[] = r.hwTypes.map((name) => ({
        name,
        providermap: { [PROVIDER]: r.hwWithoutFlavor.includes(name) ? { cost: "1" } : { flavor: `f-${name}` } } as Record<
          string,
          Record<string, string>
        >,
      }));
      const imageTypes: MachineType[] = r.imgTypes.map((name) => ({
        name,
        providermap: { [PROVIDER]: { image: `i-${name}` } },
      }));
      return {
        requireEvery: r.requireEvery,
        request: {
          template,
          provider: { name: PROVIDER },
          catalog: { services: POOL.map(service), hardwareTypes, imageTypes },
          numMachines: r.n,
          clusterId: "42",
          clusterName: "prop",
        },
      };
    });
}

// ---------------------------------------------------------------------------------------------------------------
// Brute force, as Coopr searches

interface BruteLayout {
  services: string[];
  hw: string;
  img: string;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function bruteComparator(x: BruteLayout, y: BruteLayout): number {
  if (x.services.length !== y.services.length) return y.services.length - x.services.length;
  return cmp(x.hw, y.hw) || cmp(x.img, y.img) || x.services.reduce((acc, s, i) => acc || cmp(s, y.services[i]!), 0);
}

/** Returns the node sequence (services, hw, img) of Coopr's preferred layout, or null when none is valid. */
function bruteForce(inst: Instance): BruteLayout[] | null | "error" {
  const { template, numMachines: n } = inst.request;
  const usable = (types: readonly MachineType[], key: string, compat: readonly string[], required: string | undefined) =>
    types
      .filter((t) => required === undefined || t.name === required)
      .filter((t) => (compat.length === 0 || compat.includes(t.name)) && t.providermap[PROVIDER]?.[key] !== undefined)
      .map((t) => t.name)
      .sort(cmp);
  const hws = usable(inst.request.catalog.hardwareTypes as MachineType[], "flavor", template.compatibility.hardwaretypes, template.defaults.hardwaretype);
  const imgs = usable(inst.request.catalog.imageTypes as MachineType[], "image", template.compatibility.imagetypes, template.defaults.imagetype);
  if (hws.length === 0 || imgs.length === 0) return "error";
  const requested = [...new Set(template.defaults.services)];
  const sc = template.constraints?.services ?? {};
  const must = template.constraints?.layout?.mustcoexist ?? [];
  const cant = template.constraints?.layout?.cantcoexist ?? [];
  const inAny = (s: string, sets: string[][]) => sets.some((set) => set.includes(s));
  const unconstrained = requested.filter((s) => !(s in sc) && !inAny(s, must) && !inAny(s, cant));
  const constrained = requested.filter((s) => !unconstrained.includes(s));
  const sets: string[][] = [];
  for (let mask = 1; mask < 1 << constrained.length; mask++) {
    const set = constrained.filter((_, i) => mask & (1 << i));
    const cantOk = cant.every((c) => !c.every((s) => set.includes(s)));
    const mustOk = must.every((m) => {
      const mp = m.filter((s) => requested.includes(s));
      return !mp.some((s) => set.includes(s)) || mp.every((s) => set.includes(s));
    });
    if (cantOk && mustOk) sets.push([...set, ...unconstrained]);
  }
  if (unconstrained.length > 0) sets.push([...unconstrained]);
  const layouts: BruteLayout[] = [];
  for (const set of sets) {
    const candidates: BruteLayout[] = [];
    for (const hw of hws) {
      for (const img of imgs) {
        const ok = set.every((s) => {
          const c = sc[s];
          if (c === undefined) return true;
          const hwl = c.hardwaretypes ?? [];
          const imgl = c.imagetypes ?? [];
          return (hwl.length === 0 || hwl.includes(hw)) && (imgl.length === 0 || imgl.includes(img));
        });
        if (ok) candidates.push({ services: [...set].sort(cmp), hw, img });
      }
    }
    candidates.sort(bruteComparator);
    if (candidates.length > 0) layouts.push(candidates[0]!);
  }
  layouts.sort(bruteComparator);
  // Quantity bounds of requested services with a constraint (requireEvery: constrained ones need >= 1).
  const bounds = requested.flatMap((s) => {
    const c = sc[s];
    let min = c?.quantities?.min ?? 0;
    const max = c?.quantities?.max ?? Infinity;
    if (inst.requireEvery && constrained.includes(s)) min = Math.max(min, 1);
    return c === undefined && min === 0 ? [] : [{ s, min, max }];
  });
  const counts = new Array<number>(layouts.length).fill(0);
  const serviceCount = new Map<string, number>();
  const valid = () =>
    bounds.every(({ s, min, max }) => {
      const c = serviceCount.get(s) ?? 0;
      return c >= min && c <= max && c <= n;
    });
  // Sound cuts only: a count never shrinks, and no service can gain more than the machines left.
  const hopeless = (rest: number) =>
    bounds.some(({ s, min, max }) => {
      const c = serviceCount.get(s) ?? 0;
      return c > max || c + rest < min;
    });
  const add = (i: number, v: number) => {
    for (const s of layouts[i]!.services) serviceCount.set(s, (serviceCount.get(s) ?? 0) + v);
  };
  // Every vector with sum n, first slot most significant, largest first.
  const walk = (i: number, rest: number): boolean => {
    if (i === layouts.length) return rest === 0 && valid();
    for (let v = rest; v >= 0; v--) {
      counts[i] = v;
      add(i, v);
      const found = !hopeless(rest - v) && walk(i + 1, rest - v);
      add(i, -v);
      if (found) return true;
    }
    counts[i] = 0;
    return false;
  };
  if (!walk(0, n)) return null;
  return layouts.flatMap((l, i) => new Array<BruteLayout>(counts[i]!).fill(l));
}

function solve(inst: Instance): LayoutSolution | "infeasible" | "error" {
  try {
    return solveLayout(inst.request, { requireEveryService: inst.requireEvery });
  } catch (err) {
    if (isCorralError(err) && err.status === 400 && err.code === "bad_request") {
      const constraint = (err.details as { constraint?: string } | undefined)?.constraint;
      return constraint === "hardwaretype" || constraint === "imagetype" ? "error" : "infeasible";
    }
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Independent constraint checker

function violations(inst: Instance, solution: LayoutSolution): string[] {
  const out: string[] = [];
  const { template, numMachines: n } = inst.request;
  const requested = [...new Set(template.defaults.services)];
  const sc = template.constraints?.services ?? {};
  const must = template.constraints?.layout?.mustcoexist ?? [];
  const cant = template.constraints?.layout?.cantcoexist ?? [];
  const hwByName = new Map((inst.request.catalog.hardwareTypes as MachineType[]).map((h) => [h.name, h]));
  const imgByName = new Map((inst.request.catalog.imageTypes as MachineType[]).map((h) => [h.name, h]));
  if (solution.nodes.length !== n) out.push(`expected ${n} nodes, got ${solution.nodes.length}`);
  const counts = new Map<string, number>();
  solution.nodes.forEach((node, i) => {
    if (node.nodenum !== 1000 + i) out.push(`node ${i} has nodenum ${node.nodenum}`);
    if (node.id !== `42-${node.nodenum}`) out.push(`node id ${node.id}`);
    for (const s of node.services) {
      if (!requested.includes(s)) out.push(`${s} not requested`);
      counts.set(s, (counts.get(s) ?? 0) + 1);
    }
    for (const c of cant) if (c.every((s) => node.services.includes(s))) out.push(`cantcoexist ${c}`);
    for (const m of must) {
      const mp = m.filter((s) => requested.includes(s));
      if (mp.some((s) => node.services.includes(s)) && !mp.every((s) => node.services.includes(s))) out.push(`mustcoexist ${m}`);
    }
    const hw = hwByName.get(node.hardwaretype);
    const img = imgByName.get(node.imagetype);
    if (hw?.providermap[PROVIDER]?.["flavor"] !== node.properties.flavor) out.push(`flavor of ${node.id}`);
    if (img?.providermap[PROVIDER]?.["image"] !== node.properties.image) out.push(`image of ${node.id}`);
    const compat = template.compatibility.hardwaretypes;
    if (compat.length > 0 && !compat.includes(node.hardwaretype)) out.push(`incompatible hw ${node.hardwaretype}`);
    for (const s of node.services) {
      const c = sc[s];
      if (c?.hardwaretypes?.length && !c.hardwaretypes.includes(node.hardwaretype)) out.push(`${s} on hw ${node.hardwaretype}`);
      if (c?.imagetypes?.length && !c.imagetypes.includes(node.imagetype)) out.push(`${s} on img ${node.imagetype}`);
    }
  });
  for (const s of requested) {
    const q = sc[s]?.quantities;
    const count = counts.get(s) ?? 0;
    let min = q?.min ?? 0;
    if (inst.requireEvery) min = Math.max(min, 1);
    if (count < min || count > (q?.max ?? Infinity)) out.push(`${s} on ${count} nodes`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

test("layout properties - the solver finds Coopr's preferred layout exactly when one exists", (t) => {
  let feasible = 0;
  let infeasible = 0;
  fc.assert(
    fc.property(instanceArb({ maxServices: 6, maxMachines: 9 }), (inst) => {
      const expected = bruteForce(inst);
      const actual = solve(inst);
      if (expected === "error") return actual === "error";
      if (expected === null) {
        infeasible++;
        return actual === "infeasible";
      }
      feasible++;
      if (typeof actual === "string") return false;
      const got = actual.nodes.map((node) => ({ services: node.services, hw: node.hardwaretype, img: node.imagetype }));
      t.deepEqual(got, expected);
      return true;
    }),
    { numRuns: 1500, seed: 20260101 },
  );
  t.log(`${feasible} feasible, ${infeasible} infeasible instances`);
  t.true(feasible > 100 && infeasible > 100, "both outcomes must be exercised");
});

test("layout properties - every returned layout satisfies every constraint of its template", (t) => {
  fc.assert(
    fc.property(instanceArb({ maxServices: 6, maxMachines: 40 }), (inst) => {
      const actual = solve(inst);
      if (typeof actual === "string") return true;
      t.deepEqual(violations(inst, actual), []);
      return true;
    }),
    { numRuns: 800, seed: 7 },
  );
});

test("layout properties - answers are deterministic, ids included", (t) => {
  fc.assert(
    fc.property(instanceArb({ maxServices: 6, maxMachines: 20 }), (inst) => {
      const a = solve(inst);
      const b = solve(structuredClone(inst));
      t.deepEqual(typeof a === "string" ? a : { ...a, stats: null }, typeof b === "string" ? b : { ...b, stats: null });
      return true;
    }),
    { numRuns: 200, seed: 11 },
  );
});

test("layout properties - a tiny step budget fails with solver_budget_exhausted, never a wrong answer", (t) => {
  fc.assert(
    fc.property(instanceArb({ maxServices: 6, maxMachines: 30 }), fc.integer({ min: 1, max: 40 }), (inst, maxSteps) => {
      const full = solve(inst);
      try {
        const limited = solveLayout(inst.request, { requireEveryService: inst.requireEvery, maxSteps });
        t.deepEqual(limited.nodes, (full as LayoutSolution).nodes);
      } catch (err) {
        if (!isCorralError(err)) throw err;
        if (err.code === SOLVER_BUDGET_EXHAUSTED) t.is(err.status, 400);
        else t.is(typeof full, "string"); // the same 400 as without a budget
      }
      return true;
    }),
    { numRuns: 300, seed: 3 },
  );
});
