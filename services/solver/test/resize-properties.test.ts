/**
 * Property tests of growing and shrinking a live cluster (docs/catalog.md, Growing and shrinking), on random
 * templates and clusters laid out by the create solver, against a brute-force oracle written from the rules:
 *
 * - a grow never changes an existing node, and the grown cluster keeps every constraint;
 * - a refused grow has no valid answer (every multiset of new node service sets is tried);
 * - when the create's layout for the larger size holds the existing nodes, a grow adds exactly the rest of it;
 * - with `services`, every new node holds exactly them, refused exactly when no type pair makes them valid;
 * - a removal is refused exactly for the rules it breaks (size min, a quantities min, a requirement it takes away),
 *   and the nodes left keep every constraint; growing and shrinking back is never refused for size or quantities.
 */
import test from "ava";
import fc from "fast-check";
import {
  isCorralError,
  type ClusterTemplate,
  type ExistingNode,
  type MachineType,
  type Service,
  type ServiceConstraint,
  type SolvedNode,
} from "@corral/contracts";
import { addServices, checkLayout, checkShrink, growCluster, solveLayout, type GrowRequest, type GrowResult } from "@corral/solver";

const PROVIDER = "p";
const POOL = ["a", "b", "c", "d", "e"];
const HW = ["h1", "h2"];
const IMG = ["i1", "i2"];

interface Cluster {
  template: ClusterTemplate;
  services: Service[];
  hardwareTypes: MachineType[];
  imageTypes: MachineType[];
  /** The cluster's service list. */
  clusterServices: string[];
  nodes: ExistingNode[];
}

interface Instance {
  cluster: Cluster;
  k: number;
  /** For grows with `services`: a subset of the cluster's services. */
  requested: string[];
  /** Indexes (modulo the node count) of nodes to remove. */
  removals: number[];
}

// ---------------------------------------------------------------------------------------------------------------
// Random clusters: a random template, laid out by the create solver

const subsetOf = <T>(items: readonly T[], min = 0, max = items.length) => fc.subarray([...items], { minLength: min, maxLength: max });

const constraintArb = fc.record({
  min: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined, freq: 2 }),
  max: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined, freq: 2 }),
  hardwaretypes: subsetOf(HW, 0, 1),
  imagetypes: subsetOf(IMG, 0, 1),
});

const instanceArb: fc.Arbitrary<Instance | undefined> = fc
  .record({
    listed: subsetOf(POOL, 1),
    must: fc.array(subsetOf(POOL, 2, 3), { maxLength: 2 }),
    cant: fc.array(subsetOf(POOL, 2, 3), { maxLength: 2 }),
    constrained: subsetOf(POOL),
    constraints: fc.array(constraintArb, { minLength: POOL.length, maxLength: POOL.length }),
    requires: fc.array(
      fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...POOL, "x") }),
      { minLength: POOL.length, maxLength: POOL.length },
    ),
    providesX: fc.option(fc.constantFrom(...POOL), { nil: undefined }),
    sizeMin: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined, freq: 2 }),
    sizeSlack: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined, freq: 2 }),
    pinnedHw: fc.option(fc.constantFrom(...HW), { nil: undefined, freq: 3 }),
    n: fc.integer({ min: 1, max: 6 }),
    k: fc.integer({ min: 1, max: 3 }),
    requested: subsetOf(POOL, 1, 3),
    removals: fc.array(fc.nat(20), { minLength: 1, maxLength: 3 }),
    addedLater: subsetOf(POOL, 0, 2),
  })
  .map((r): Instance | undefined => {
    const serviceConstraints: Record<string, ServiceConstraint> = {};
    r.constrained.forEach((name) => {
      const c = r.constraints[POOL.indexOf(name)]!;
      serviceConstraints[name] = {
        hardwaretypes: c.hardwaretypes,
        imagetypes: c.imagetypes,
        quantities: { ...(c.min === undefined ? {} : { min: c.min }), ...(c.max === undefined ? {} : { max: c.max }) },
      };
    });
    const sizeMax = r.sizeSlack === undefined ? undefined : r.n + r.sizeSlack;
    const template: ClusterTemplate = {
      name: "t",
      compatibility: { hardwaretypes: [], imagetypes: [], services: [] },
      defaults: { services: r.listed, provider: PROVIDER, config: {}, ...(r.pinnedHw === undefined ? {} : { hardwaretype: r.pinnedHw }) },
      constraints: {
        size: { ...(r.sizeMin === undefined ? {} : { min: r.sizeMin }), ...(sizeMax === undefined ? {} : { max: sizeMax }) },
        layout: { mustcoexist: r.must, cantcoexist: r.cant },
        services: serviceConstraints,
      },
    };
    const services = POOL.map((name, i): Service => {
      const required = r.requires[i];
      return {
        name,
        dependencies: {
          provides: r.providesX === name ? ["x"] : [],
          conflicts: [],
          install: { requires: [], uses: [] },
          runtime: { requires: required === undefined || required === name ? [] : [required], uses: [] },
        },
        provisioner: { actions: {} },
      };
    });
    const hardwareTypes = HW.map((name) => ({ name, providermap: { [PROVIDER]: { flavor: `f-${name}` } } }));
    const imageTypes = IMG.map((name) => ({ name, providermap: { [PROVIDER]: { image: `i-${name}` } } }));
    // Some clusters get part of their services after the create, placed by the add-services solver.
    const listed = [...new Set(r.listed)];
    const later = r.addedLater.filter((s) => listed.includes(s) && listed.length > 1);
    const atCreate = listed.filter((s) => !later.includes(s));
    let nodes: ExistingNode[];
    let clusterServices = atCreate;
    try {
      nodes = solveLayout({
        template,
        provider: { name: PROVIDER },
        catalog: { services, hardwareTypes, imageTypes },
        numMachines: r.n,
        clusterId: "42",
        clusterName: "prop",
        services: atCreate,
      }).nodes;
    } catch (err) {
      if (isCorralError(err) && err.status === 400) return undefined;
      throw err;
    }
    if (later.length > 0) {
      try {
        const added = addServices({ template, catalog: { services }, nodes, clusterServices, services: later });
        nodes = nodes.map((n) => ({ ...n, services: added.changedNodes.find((c) => c.id === n.id)?.services ?? n.services }));
        clusterServices = added.services;
      } catch (err) {
        if (!isCorralError(err) || err.status !== 400) throw err;
      }
    }
    return {
      cluster: { template, services, hardwareTypes, imageTypes, clusterServices, nodes },
      k: r.k,
      requested: r.requested.filter((s) => clusterServices.includes(s)),
      removals: r.removals,
    };
  });

function growRequest(cluster: Cluster, k: number, extra: Partial<GrowRequest> = {}): GrowRequest {
  return {
    template: cluster.template,
    provider: { name: PROVIDER },
    catalog: { hardwareTypes: cluster.hardwareTypes, imageTypes: cluster.imageTypes },
    nodes: cluster.nodes,
    clusterServices: cluster.clusterServices,
    numMachines: k,
    clusterId: "42",
    clusterName: "prop",
    ...extra,
  };
}

/** The grow's answer, or the constraint its 400 names. Anything else (a plain Error is a solver bug) fails. */
function grow(cluster: Cluster, k: number, extra: Partial<GrowRequest> = {}): GrowResult | { refused: string } {
  try {
    return growCluster(growRequest(cluster, k, extra));
  } catch (err) {
    if (isCorralError(err) && err.status === 400 && err.code === "bad_request") {
      return { refused: String((err.details as { constraint?: unknown }).constraint) };
    }
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The oracle, from the rules

const sc = (cluster: Cluster, s: string): ServiceConstraint | undefined => cluster.template.constraints?.services?.[s];
const bounds = (cluster: Cluster, s: string) => ({
  min: sc(cluster, s)?.quantities?.min ?? 0,
  max: sc(cluster, s)?.quantities?.max ?? Infinity,
});
const sizeBounds = (cluster: Cluster) => ({
  min: cluster.template.constraints?.size?.min ?? 1,
  max: cluster.template.constraints?.size?.max ?? Infinity,
});

/**
 * The services a new node may hold: the cluster's list, but a service on no node that shares a mustcoexist set with
 * a service on a node (its arrival would break the nodes holding the other one).
 */
function newNodeServices(cluster: Cluster): string[] {
  const present = new Set(cluster.nodes.flatMap((n) => n.services));
  const must = cluster.template.constraints?.layout?.mustcoexist ?? [];
  return cluster.clusterServices.filter((s) => present.has(s) || !must.some((m) => m.includes(s) && m.some((t) => present.has(t))));
}

/** A new node's service set: mustcoexist over the services new nodes may hold (as a create reads it), no cantcoexist set. */
function isValidNewSet(cluster: Cluster, set: readonly string[]): boolean {
  const allowed = newNodeServices(cluster);
  if (!set.every((s) => allowed.includes(s))) return false;
  const layout = cluster.template.constraints?.layout;
  if ((layout?.cantcoexist ?? []).some((c) => c.every((s) => set.includes(s)))) return false;
  return (layout?.mustcoexist ?? []).every((m) => {
    const listed = m.filter((s) => allowed.includes(s));
    return !listed.some((s) => set.includes(s)) || listed.every((s) => set.includes(s));
  });
}

const allows = (list: readonly string[] | undefined, type: string) => list === undefined || list.length === 0 || list.includes(type);

/** The type pairs a node holding `set` may use: the pinned hardware type or any, each allowed by every service. */
function typePairs(cluster: Cluster, set: readonly string[], pinnedHw?: string): [string, string][] {
  const hws = pinnedHw ?? cluster.template.defaults.hardwaretype;
  const pairs: [string, string][] = [];
  for (const hw of hws === undefined ? HW : [hws]) {
    for (const img of IMG) {
      if (set.every((s) => allows(sc(cluster, s)?.hardwaretypes, hw) && allows(sc(cluster, s)?.imagetypes, img))) pairs.push([hw, img]);
    }
  }
  return pairs;
}

const countsOf = (nodes: readonly { services: readonly string[] }[]) => {
  const counts = new Map<string, number>();
  for (const n of nodes) for (const s of new Set(n.services)) counts.set(s, (counts.get(s) ?? 0) + 1);
  return counts;
};

/** Whether the cluster with `added` nodes keeps every constraint: checkLayout, every listed min, the size. */
function keepsConstraints(cluster: Cluster, added: readonly ExistingNode[]): boolean {
  const all = [...cluster.nodes, ...added];
  if (checkLayout(cluster.template, all).length > 0) return false;
  const counts = countsOf(all);
  const size = sizeBounds(cluster);
  if (all.length < size.min || all.length > size.max) return false;
  return cluster.clusterServices.every((s) => (counts.get(s) ?? 0) >= bounds(cluster, s).min);
}

const subsets = (items: readonly string[]): string[][] =>
  items.reduce<string[][]>((acc, s) => [...acc, ...acc.map((set) => [...set, s])], [[]]).filter((set) => set.length > 0);

/** Whether some `k` new nodes (any valid service sets) keep every constraint. */
function someGrowExists(cluster: Cluster, k: number): boolean {
  const shapes = subsets(newNodeServices(cluster))
    .filter((set) => isValidNewSet(cluster, set))
    .flatMap((set) => typePairs(cluster, set).slice(0, 1).map(([hw, img]) => ({ services: set, hw, img })));
  const pick = (from: number, left: number, chosen: ExistingNode[]): boolean => {
    if (left === 0) return keepsConstraints(cluster, chosen);
    for (let i = from; i < shapes.length; i++) {
      const shape = shapes[i]!;
      const node = { id: `new-${left}`, nodenum: 5000 + left, services: shape.services, hardwaretype: shape.hw, imagetype: shape.img };
      if (pick(i, left - 1, [...chosen, node])) return true;
    }
    return false;
  };
  return pick(0, k, []);
}

const layoutKey = (n: { services: readonly string[]; hardwaretype: string; imagetype: string }) =>
  `${[...n.services].sort().join("+")}|${n.hardwaretype}|${n.imagetype}`;

/** The multiset `big` minus `small` (keys), or undefined when `small` is not within `big`. */
function difference(big: readonly string[], small: readonly string[]): string[] | undefined {
  const rest = [...big];
  for (const key of small) {
    const i = rest.indexOf(key);
    if (i < 0) return undefined;
    rest.splice(i, 1);
  }
  return rest;
}

/** Every rule a removal breaks, as `constraint:service` (size: `size:`), from the rules alone. */
function expectedShrinkViolations(cluster: Cluster, nodes: readonly ExistingNode[], removed: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const remaining = nodes.filter((n) => !removed.has(n.id));
  if (remaining.length < sizeBounds(cluster).min) out.push("size:");
  const before = countsOf(nodes);
  const after = countsOf(remaining);
  for (const s of [...before.keys()].sort()) {
    const left = after.get(s) ?? 0;
    if (left < bounds(cluster, s).min && left < before.get(s)!) out.push(`quantities:${s}`);
  }
  const provided = (counts: Map<string, number>) => {
    const names = new Set(counts.keys());
    for (const s of counts.keys()) for (const p of cluster.services.find((d) => d.name === s)!.dependencies.provides) names.add(p);
    return names;
  };
  const providedBefore = provided(before);
  const providedAfter = provided(after);
  for (const s of [...after.keys()].sort()) {
    for (const r of cluster.services.find((d) => d.name === s)!.dependencies.runtime.requires) {
      if (providedBefore.has(r) && !providedAfter.has(r)) out.push(`requires:${s}`);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

const RUNS = { numRuns: 500, seed: 2027 };

test("grow properties - a grow keeps every constraint and changes no existing node; a refused grow has no answer", (t) => {
  let grown = 0;
  let refused = 0;
  fc.assert(
    fc.property(instanceArb, (inst) => {
      if (inst === undefined) return true;
      const { cluster, k } = inst;
      const before = structuredClone(cluster.nodes);
      const result = grow(cluster, k);
      t.deepEqual(cluster.nodes, before, "the existing nodes are not touched");
      if ("refused" in result) {
        refused++;
        t.false(someGrowExists(cluster, k), `refused (${result.refused}) though some ${k} new nodes keep every constraint`);
        return true;
      }
      grown++;
      const highest = Math.max(...cluster.nodes.map((n) => n.nodenum));
      t.deepEqual(
        result.nodes.map((n) => n.nodenum),
        Array.from({ length: k }, (_, i) => highest + 1 + i),
      );
      t.deepEqual(result.nodes.map((n) => n.id), result.nodes.map((n) => `42-${n.nodenum}`));
      for (const node of result.nodes) {
        t.true(node.services.every((s) => cluster.clusterServices.includes(s)), `${node.services} outside the cluster's services`);
        t.true(isValidNewSet(cluster, node.services), `new node [${node.services}] breaks mustcoexist or cantcoexist`);
        t.true(
          typePairs(cluster, node.services).some(([hw, img]) => hw === node.hardwaretype && img === node.imagetype),
          `new node [${node.services}] on ${node.hardwaretype}/${node.imagetype}`,
        );
        t.is(node.properties.flavor, `f-${node.hardwaretype}`);
      }
      t.true(keepsConstraints(cluster, result.nodes), "the grown cluster keeps every constraint");
      return true;
    }),
    RUNS,
  );
  t.log(`${grown} grown, ${refused} refused`);
  t.true(grown > 50 && refused > 10, "both outcomes must be exercised");
});

test("grow properties - when the create's layout for the larger size holds the cluster, a grow adds the rest of it", (t) => {
  let compared = 0;
  fc.assert(
    fc.property(instanceArb, (inst) => {
      if (inst === undefined) return true;
      const { cluster, k } = inst;
      let larger: SolvedNode[];
      try {
        larger = solveLayout({
          template: cluster.template,
          provider: { name: PROVIDER },
          catalog: { services: cluster.services, hardwareTypes: cluster.hardwareTypes, imageTypes: cluster.imageTypes },
          numMachines: cluster.nodes.length + k,
          clusterId: "42",
          clusterName: "prop",
          services: cluster.clusterServices,
        }).nodes;
      } catch {
        return true;
      }
      const rest = difference(larger.map(layoutKey), cluster.nodes.map(layoutKey));
      if (rest === undefined) return true;
      compared++;
      const result = grow(cluster, k);
      if ("refused" in result) return t.fail(`refused (${result.refused}) though the create's layout for ${larger.length} nodes holds the cluster`);
      t.deepEqual(result.nodes.map(layoutKey), rest);
      return true;
    }),
    RUNS,
  );
  t.log(`${compared} grows compared with the create's layout`);
  t.true(compared > 50);
});

test("grow properties - with services, every new node holds exactly them, refused exactly when they cannot", (t) => {
  let grown = 0;
  let refused = 0;
  fc.assert(
    fc.property(instanceArb, (inst) => {
      if (inst === undefined || inst.requested.length === 0) return true;
      const { cluster, k, requested } = inst;
      const set = [...requested].sort();
      const possible =
        isValidNewSet(cluster, set) &&
        typePairs(cluster, set).some(([hardwaretype, imagetype]) =>
          keepsConstraints(
            cluster,
            Array.from({ length: k }, (_, i) => ({ id: `new-${i}`, nodenum: 5000 + i, services: set, hardwaretype, imagetype })),
          ),
        );
      const result = grow(cluster, k, { services: requested });
      if ("refused" in result) {
        refused++;
        t.false(possible, `[${set}] refused (${result.refused}) though ${k} nodes with them keep every constraint`);
        t.true(["mustcoexist", "cantcoexist", "quantities", "hardwaretypes", "imagetypes", "size"].includes(result.refused));
        return true;
      }
      grown++;
      t.true(possible, `[${set}] accepted though no ${k} nodes with them keep every constraint`);
      for (const node of result.nodes) t.deepEqual(node.services, set);
      t.true(keepsConstraints(cluster, result.nodes));
      return true;
    }),
    RUNS,
  );
  t.log(`${grown} grown, ${refused} refused`);
  t.true(grown > 20 && refused > 20, "both outcomes must be exercised");
});

test("shrink properties - a removal is refused exactly for the rules it breaks, and what remains keeps every constraint", (t) => {
  let accepted = 0;
  let refused = 0;
  fc.assert(
    fc.property(instanceArb, (inst) => {
      if (inst === undefined) return true;
      const { cluster, removals } = inst;
      const removed = new Set(removals.map((i) => cluster.nodes[i % cluster.nodes.length]!.id));
      const check = checkShrink({ template: cluster.template, catalog: { services: cluster.services }, nodes: cluster.nodes, remove: [...removed] });
      const expected = expectedShrinkViolations(cluster, cluster.nodes, removed);
      if (!check.ok) {
        refused++;
        t.deepEqual(check.violations.map((v) => `${v.constraint}:${v.service ?? ""}`), expected);
        for (const v of check.violations) t.true(v.message.length > 0);
        return true;
      }
      accepted++;
      t.deepEqual(expected, []);
      t.deepEqual(check.remaining.map((n) => n.id), cluster.nodes.filter((n) => !removed.has(n.id)).map((n) => n.id));
      t.deepEqual(checkLayout(cluster.template, check.remaining), [], "the nodes left keep every constraint");
      const left = countsOf(check.remaining);
      t.deepEqual(check.leavingServices, [...countsOf(cluster.nodes).keys()].filter((s) => !left.has(s)).sort());
      return true;
    }),
    RUNS,
  );
  t.log(`${accepted} accepted, ${refused} refused`);
  t.true(accepted > 50 && refused > 50, "both outcomes must be exercised");
});

test("shrink properties - growing by k and removing the new nodes is never refused for size or quantities", (t) => {
  let shrunk = 0;
  fc.assert(
    fc.property(instanceArb, (inst) => {
      if (inst === undefined) return true;
      const { cluster, k } = inst;
      const result = grow(cluster, k);
      if ("refused" in result) return true;
      const nodes = [...cluster.nodes, ...result.nodes];
      const check = checkShrink({
        template: cluster.template,
        catalog: { services: cluster.services },
        nodes,
        remove: result.nodes.map((n) => n.id),
      });
      shrunk++;
      if (check.ok) {
        t.deepEqual(check.remaining, cluster.nodes);
        return true;
      }
      // Only a requirement the new nodes brought can be taken away again.
      const provided = new Set(cluster.nodes.flatMap((n) => n.services.flatMap((s) => [s, ...cluster.services.find((d) => d.name === s)!.dependencies.provides])));
      for (const v of check.violations) {
        t.is(v.constraint, "requires", v.message);
        t.false(provided.has(v.requires!), v.message);
      }
      return true;
    }),
    RUNS,
  );
  t.true(shrunk > 50);
});
