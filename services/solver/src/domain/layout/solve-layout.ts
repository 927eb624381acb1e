/**
 * The layout solver: from a create request to the cluster's nodes (reference coopr-algorithms.md 2.1-2.5).
 */
import { BadRequestError, isCorralError } from "../../../../../shared/src/errors.js";
import { describe as describeValue } from "../../../../../shared/src/validation/primitives.js";
import { Budget, SOLVER_BUDGET_EXHAUSTED, SubBudget } from "./budget.js";
import { checkDependencies, checkServiceCompatibility, lookupServices, resolveUsableTypes, toNameMap } from "./catalog.js";
import { normalizeConstraints, type NormalizedConstraints } from "./constraints.js";
import { lpConflict, searchCounts, type CountProblem, type QuantityBound } from "./count-search.js";
import { createHostname, nodeIdFor } from "./hostname.js";
import { generateNodeLayouts, isConstrained, type CandidateLayout } from "./node-layouts.js";
import type { LayoutRequest, LayoutSolution, NodeLayoutCount, SolvedNode, SolverOptions } from "./types.js";

/** Nodes are numbered from here, as in Coopr. */
export const FIRST_NODENUM = 1000;

const nonEmpty = (s: string | undefined): string | undefined => (s === undefined || s === "" ? undefined : s);

/**
 * Solves the layout of a new cluster: checks the request against the catalog and the template, then finds
 * Coopr's preferred layout (the lexicographically greatest valid count vector over the node layouts in
 * Coopr's preference order), or proves that none exists and says which constraints clash.
 *
 * @throws BadRequestError (400, `bad_request`) when the request cannot be satisfied; `details.constraint`
 *   names the check (`numMachines`, `size`, `hardwaretype`, `imagetype`, `compatibility.services`,
 *   `services`, `requires`, `conflicts`, `quantities`).
 * @throws BadRequestError (400, `solver_budget_exhausted`) when the search runs out of steps or time.
 */
export function solveLayout(request: LayoutRequest, options?: SolverOptions): LayoutSolution {
  const budget = new Budget(options, "layout solver");
  const { template } = request;
  const constraints = normalizeConstraints(template);
  const n = request.numMachines;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new BadRequestError(`numMachines must be a positive integer, got ${describeValue(n)}`, {
      constraint: "numMachines",
      numMachines: n,
    });
  }
  if (n < constraints.sizeMin || n > constraints.sizeMax) {
    const bound =
      constraints.sizeMax === Infinity
        ? `at least ${constraints.sizeMin}`
        : `at least ${constraints.sizeMin} but not greater than ${constraints.sizeMax}`;
    throw new BadRequestError(
      `Size must be ${bound}. Now it's ${n} (template ${template.name}, constraints.size)`,
      { constraint: "size", min: constraints.sizeMin, max: constraints.sizeMax === Infinity ? null : constraints.sizeMax, numMachines: n },
    );
  }

  const providerName = request.provider.name;
  const hardware = resolveUsableTypes(
    "hardware type",
    "flavor",
    toNameMap(request.catalog.hardwareTypes),
    nonEmpty(request.hardwaretype) ?? nonEmpty(template.defaults.hardwaretype),
    template.compatibility.hardwaretypes,
    template,
    providerName,
  );
  const images = resolveUsableTypes(
    "image type",
    "image",
    toNameMap(request.catalog.imageTypes),
    nonEmpty(request.imagetype) ?? nonEmpty(template.defaults.imagetype),
    template.compatibility.imagetypes,
    template,
    providerName,
  );

  const given = request.services !== undefined && request.services.length > 0 ? request.services : template.defaults.services;
  const services = [...new Set(given)];
  if (services.length === 0) {
    throw new BadRequestError("a cluster needs at least one service", { constraint: "services" });
  }
  // A name that is no service at all is reported as such, before asking whether the template allows it.
  const serviceMap = lookupServices(toNameMap(request.catalog.services), services);
  checkServiceCompatibility(template, services);
  checkDependencies(serviceMap);

  const bounds = quantityBounds(services, constraints, options?.requireEveryService === true);
  const generated = generateNodeLayouts(
    services,
    constraints,
    hardware.map((h) => h.name),
    images.map((i) => i.name),
    new Set(bounds.names),
    budget,
  );
  const problem = countProblem(bounds, generated.layouts, n);
  precheck(problem, generated.unplaceable, n);
  if (generated.layouts.length === 0) {
    throw new BadRequestError(`no node layout is possible: ${[...generated.unplaceable.values()].join("; ")}`, {
      constraint: "layout",
      reasons: [...generated.unplaceable.values()],
    });
  }

  const result = searchCounts(problem.counts, (steps) => {
    budget.spend(steps);
    return true;
  });
  if (result.status !== "found") throw explainInfeasible(problem, generated.layouts, n, budget);

  const dnsSuffix = nonEmpty(request.dnsSuffix) ?? nonEmpty(template.defaults.dnsSuffix);
  const flavorOf = new Map(hardware.map((h) => [h.name, h.entry["flavor"] as string]));
  const imageOf = new Map(images.map((i) => [i.name, i.entry]));
  const nodes: SolvedNode[] = [];
  const layout: NodeLayoutCount[] = [];
  let nodenum = FIRST_NODENUM;
  result.counts.forEach((count, i) => {
    if (count === 0) return;
    const l = generated.layouts[i]!;
    layout.push({ services: [...l.services], hardwaretype: l.hardwaretype, imagetype: l.imagetype, count });
    const flavor = flavorOf.get(l.hardwaretype) as string;
    const imageEntry = imageOf.get(l.imagetype) as Readonly<Record<string, string>>;
    for (let j = 0; j < count; j++, nodenum++) {
      nodes.push({
        id: nodeIdFor(request.clusterId, nodenum),
        clusterId: request.clusterId,
        nodenum,
        services: [...l.services],
        hardwaretype: l.hardwaretype,
        imagetype: l.imagetype,
        properties: {
          hostname: createHostname(request.clusterName, request.clusterId, nodenum, dnsSuffix),
          nodenum,
          hardwaretype: l.hardwaretype,
          imagetype: l.imagetype,
          flavor,
          image: imageEntry["image"] as string,
          sshuser: imageEntry["sshuser"] ?? "root",
        },
      });
    }
  });
  const effectiveSuffix = dnsSuffix === undefined ? "local" : dnsSuffix.replace(/^\./, "");
  return {
    services,
    dnsSuffix: effectiveSuffix,
    nodes,
    layout,
    stats: { steps: budget.steps, candidateLayouts: generated.layouts.length },
  };
}

interface CountedProblem {
  counts: CountProblem;
  /** Service name per counted index. */
  names: string[];
}

interface Bounds {
  names: string[];
  min: number[];
  max: number[];
}

/**
 * Counted services: requested constrained services with a quantity bound (min > 0 or a finite max), as in
 * Coopr's ClusterLayoutFinder, which only reads constraints of services on the cluster.
 */
function quantityBounds(services: readonly string[], constraints: NormalizedConstraints, requireEvery: boolean): Bounds {
  const names: string[] = [];
  const min: number[] = [];
  const max: number[] = [];
  for (const s of services) {
    const sc = constraints.services.get(s);
    let lo = sc?.min ?? 0;
    const hi = sc?.max ?? Infinity;
    if (requireEvery && isConstrained(s, constraints)) lo = Math.max(lo, 1);
    if (lo > 0 || hi < Infinity) {
      names.push(s);
      min.push(lo);
      max.push(hi);
    }
  }
  return { names, min, max };
}

function countProblem(bounds: Bounds, layouts: readonly CandidateLayout[], n: number): CountedProblem {
  const index = new Map(bounds.names.map((s, k) => [s, k]));
  const perLayout = layouts.map((l) => l.services.flatMap((s) => (index.has(s) ? [index.get(s) as number] : [])));
  return { counts: { n, min: bounds.min, max: bounds.max, layouts: perLayout }, names: bounds.names };
}

/** Single-service impossibilities, reported with their cause before any search. */
function precheck(problem: CountedProblem, unplaceable: ReadonlyMap<string, string>, n: number): void {
  const { min, max } = problem.counts;
  const nodes = (count: number) => `${count} node${count === 1 ? "" : "s"}`;
  problem.names.forEach((s, k) => {
    if (min[k]! > max[k]!) {
      throw new BadRequestError(`service ${s} must be on at least ${nodes(min[k]!)} but its quantities max is ${max[k]}`, {
        constraint: "quantities",
        service: s,
        min: min[k],
        max: max[k],
      });
    }
  });
  problem.names.forEach((s, k) => {
    if (min[k]! > n) {
      throw new BadRequestError(`service ${s} must be on at least ${nodes(min[k]!)} but the cluster has ${n}`, {
        constraint: "quantities",
        service: s,
        min: min[k],
        numMachines: n,
      });
    }
  });
  problem.names.forEach((s, k) => {
    if (min[k]! > 0 && unplaceable.has(s)) {
      throw new BadRequestError(`service ${s} must be on at least ${nodes(min[k]!)}, but ${unplaceable.get(s)}`, {
        constraint: "quantities",
        service: s,
        min: min[k],
        reason: unplaceable.get(s),
      });
    }
  });
}

type Bound = QuantityBound;

/**
 * Finds a small set of quantity bounds that cannot hold together and turns it into the error.
 *
 * When the LP relaxation is infeasible (the usual proof), its Farkas certificate names the bounds involved and
 * a deletion filter with LP checks shrinks them to a set where dropping any bound makes the relaxation feasible.
 * Otherwise (integer-only infeasibility) the deletion filter runs full searches, each with a capped share of
 * the remaining budget; a bound whose test runs out of steps is kept, so the set is always infeasible, if not
 * always minimal.
 */
function explainInfeasible(
  problem: CountedProblem,
  layouts: readonly CandidateLayout[],
  n: number,
  budget: Budget,
): BadRequestError {
  const { counts, names } = problem;
  const restrict = (bounds: readonly Bound[]): CountProblem => {
    const min = counts.min.map(() => 0);
    const max = counts.max.map(() => Infinity);
    for (const b of bounds) {
      if (b.kind === "min") min[b.k] = counts.min[b.k]!;
      else max[b.k] = counts.max[b.k]!;
    }
    return { ...counts, min, max };
  };
  const order = (bounds: readonly Bound[]): Bound[] =>
    [...bounds].sort((a, b) => a.k - b.k || (a.kind === b.kind ? 0 : a.kind === "max" ? -1 : 1));
  const spend = (steps: number) => budget.spend(steps);
  const all: Bound[] = [];
  names.forEach((_, k) => {
    if (counts.max[k]! < n) all.push({ k, kind: "max" });
    if (counts.min[k]! > 0) all.push({ k, kind: "min" });
  });
  // `kept` is infeasible at every point; if the budget runs out while shrinking it, the error lists it as it is.
  let kept: Bound[] = [...all];
  try {
    const certificate = lpConflict(counts, spend);
    if (certificate !== undefined) {
      kept = order(certificate.filter((b, i) => certificate.findIndex((c) => c.k === b.k && c.kind === b.kind) === i));
      for (const bound of [...kept]) {
        const trial = kept.filter((b) => b !== bound);
        if (lpConflict(restrict(trial), spend) !== undefined) kept = trial;
      }
    } else {
      const share = Math.max(1000, Math.min(200_000, Math.floor(budget.remaining() / (2 * all.length + 2))));
      for (const bound of all) {
        const trial = kept.filter((b) => b !== bound);
        const sub = new SubBudget(budget, share);
        const outcome = searchCounts(restrict(trial), (steps) => sub.trySpend(steps));
        if (outcome.status === "infeasible") kept = trial;
      }
    }
  } catch (err) {
    if (!isCorralError(err) || err.code !== SOLVER_BUDGET_EXHAUSTED) throw err;
  }
  const describe = (b: Bound): string =>
    b.kind === "min"
      ? `${names[b.k]} on at least ${counts.min[b.k]} node${counts.min[b.k] === 1 ? "" : "s"}`
      : `${names[b.k]} on at most ${counts.max[b.k]} node${counts.max[b.k] === 1 ? "" : "s"}`;
  const hints: string[] = [];
  const maxed = kept.filter((b) => b.kind === "max").map((b) => names[b.k] as string);
  if (maxed.length > 0 && layouts.every((l) => l.services.some((s) => maxed.includes(s)))) {
    hints.push(`every possible node holds ${maxed.length === 1 ? maxed[0] : `one of ${maxed.join(", ")}`}`);
  }
  const mins = kept.filter((b) => b.kind === "min").map((b) => names[b.k] as string);
  for (let a = 0; a < mins.length; a++) {
    for (let b = a + 1; b < mins.length; b++) {
      const sa = mins[a] as string;
      const sb = mins[b] as string;
      if (!layouts.some((l) => l.services.includes(sa) && l.services.includes(sb))) {
        hints.push(`${sa} and ${sb} never share a node`);
      }
    }
  }
  for (const a of mins) {
    for (const b of maxed) {
      if (a !== b && layouts.every((l) => !l.services.includes(a) || l.services.includes(b))) {
        hints.push(`every node with ${a} also holds ${b}`);
      }
    }
  }
  const message =
    `no layout of ${n} node${n === 1 ? "" : "s"} can have ${kept.map(describe).join(" and ")}` +
    (hints.length > 0 ? ` (${hints.join("; ")})` : "");
  return new BadRequestError(message, {
    constraint: "quantities",
    numMachines: n,
    conflicting: kept.map((b) =>
      b.kind === "min" ? { service: names[b.k], min: counts.min[b.k] } : { service: names[b.k], max: counts.max[b.k] },
    ),
    nodeLayouts: layouts.slice(0, 20).map((l) => ({ services: l.services, hardwaretype: l.hardwaretype, imagetype: l.imagetype })),
  });
}
