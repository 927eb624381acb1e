/**
 * Add-services solver: Coopr's own ClusterLayoutUpdaterTest cases, the service Coopr's search loses when it
 * backtracks, the test catalog, and a property test against a literal re-implementation of Coopr's search
 * (AddServiceChangeIterator + ClusterLayout.isValid + depth-first search), with the lost-queue bug fixed.
 */
import test from "ava";
import fc from "fast-check";
import {
  isCorralError,
  type ClusterTemplate,
  type AddServicesRequest,
  type AddServicesResult,
  type ExistingNode,
} from "@corral/contracts";
import { addServices, checkLayout, solveLayout, SOLVER_BUDGET_EXHAUSTED } from "@corral/solver";
import { badRequest, reactorCatalog, reactorTemplate, svc } from "./reactor-medium.js";
import { fixtureSolverCatalog, fixtureTemplate } from "../../../test/helpers/fixture-catalog.js";



/** Node id -> services after the change. */
function finalServices(nodes: readonly ExistingNode[], result: AddServicesResult): Map<string, string[]> {
  const out = new Map(nodes.map((n) => [n.id, [...n.services].sort()]));
  for (const changed of result.changedNodes) out.set(changed.id, changed.services);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// coopr-server ClusterLayoutUpdaterTest: reactor-medium, 1 master (namenode) + 50 slaves (datanode)

const reactorTemplateAdd = reactorTemplate();
const reactorCatalogAdd = reactorCatalog();
const reactorNodes: ExistingNode[] = [
  { id: "master", nodenum: 1000, services: ["namenode"], hardwaretype: "large-mem", imagetype: "centos6" },
  ...Array.from({ length: 50 }, (_, i) => ({
    id: `slave-${i}`,
    nodenum: 1001 + i,
    services: ["datanode"],
    hardwaretype: "medium",
    imagetype: "centos6",
  })),
];
const reactorRequest = (services: string[]): AddServicesRequest => ({
  template: reactorTemplateAdd,
  catalog: reactorCatalogAdd,
  nodes: reactorNodes,
  services,
});

test("coopr ClusterLayoutUpdaterTest.testAddService - resourcemanager joins the namenode", (t) => {
  const result = addServices(reactorRequest(["resourcemanager"]));
  t.deepEqual(result.placements, [{ service: "resourcemanager", nodeIds: ["master"] }]);
  t.deepEqual(result.changedNodes, [
    { id: "master", nodenum: 1000, addedServices: ["resourcemanager"], services: ["namenode", "resourcemanager"] },
  ]);
  t.deepEqual(result.services, ["namenode", "datanode", "resourcemanager"]);
});

test("coopr ClusterLayoutUpdaterTest.testAddServices - masters to the master, workers to every slave", (t) => {
  const result = addServices(reactorRequest(["resourcemanager", "nodemanager", "hbasemaster", "regionserver"]));
  const after = finalServices(reactorNodes, result);
  t.deepEqual(after.get("master"), ["hbasemaster", "namenode", "resourcemanager"]);
  for (let i = 0; i < 50; i++) t.deepEqual(after.get(`slave-${i}`), ["datanode", "nodemanager", "regionserver"]);
  t.is(result.changedNodes.length, 51);
  t.deepEqual(checkLayout(reactorTemplateAdd, [...reactorNodes].map((n) => ({ ...n, services: after.get(n.id)! }))), []);
});

test("coopr ClusterLayoutUpdaterTest.testNoSolution - zookeeper cannot share a node with namenode or datanode", (t) => {
  let err = badRequest(t, () => addServices(reactorRequest(["zookeeper"])));
  t.is(
    err.message,
    "no node can take zookeeper: 1 node with [namenode]: cantcoexist [namenode, zookeeper]; 50 nodes with [datanode]: cantcoexist [datanode, zookeeper]",
  );
  t.like(err.details, { constraint: "layout", service: "zookeeper" });
  err = badRequest(t, () => addServices(reactorRequest(["resourcemanager", "nodemanager", "zookeeper"])));
  t.regex(err.message, /^no node can take zookeeper/);
});

// Coopr's search drops a queued service when it backtracks: two nodes {x}; A (1..2) and B (1..3) with
// cantcoexist [A, B].
test("lost-service bug - B is placed after A backs off to one node", (t) => {
  const template: ClusterTemplate = {
    name: "t",
    compatibility: { hardwaretypes: [], imagetypes: [], services: [] },
    defaults: { services: ["x"], provider: "p", config: {} },
    constraints: {
      services: { A: { quantities: { min: 1, max: 2 } }, B: { quantities: { min: 1, max: 3 } } },
      layout: { cantcoexist: [["A", "B"]] },
    },
  };
  const nodes: ExistingNode[] = [
    { id: "n2", nodenum: 1001, services: ["x"], hardwaretype: "h", imagetype: "i" },
    { id: "n1", nodenum: 1000, services: ["x"], hardwaretype: "h", imagetype: "i" },
  ];
  const result = addServices({ template, catalog: { services: [svc("x"), svc("A"), svc("B")] }, nodes, services: ["B", "A"] });
  t.deepEqual(result.placements, [
    { service: "B", nodeIds: ["n2"] },
    { service: "A", nodeIds: ["n1"] },
  ]);
  t.deepEqual(result.services, ["x", "B", "A"]);
  // A third service that cannot fit anywhere is an error, never silently dropped.
  const withC: ClusterTemplate = structuredClone(template);
  withC.constraints!.services!["C"] = { quantities: { min: 1 } };
  withC.constraints!.layout!.cantcoexist!.push(["A", "C"], ["B", "C"]);
  const err = badRequest(t, () =>
    addServices({ template: withC, catalog: { services: [svc("x"), svc("A"), svc("B"), svc("C")] }, nodes, services: ["A", "B", "C"] }),
  );
  t.is(err.code, "bad_request");
  t.is(err.message, "cannot add A, B, C together: after placing A, no placement of B leaves room for C");
});

test("node choice - lowest nodenums first, independent of input order; unconstrained services go everywhere", (t) => {
  const template: ClusterTemplate = {
    name: "t",
    compatibility: { hardwaretypes: [], imagetypes: [], services: [] },
    defaults: { services: ["x"], provider: "p", config: {} },
    constraints: { services: { web: { quantities: { min: 2, max: 2 } } } },
  };
  const nodes: ExistingNode[] = [1004, 1002, 1000, 1003, 1001].map((nodenum) => ({
    id: `n${nodenum}`,
    nodenum,
    services: ["x"],
    hardwaretype: "h",
    imagetype: "i",
  }));
  const request = { template, catalog: { services: [svc("x"), svc("web"), svc("agent")] }, nodes, services: ["agent", "web"] };
  const result = addServices(request);
  t.deepEqual(result.placements, [
    { service: "agent", nodeIds: ["n1000", "n1001", "n1002", "n1003", "n1004"] },
    { service: "web", nodeIds: ["n1000", "n1001"] },
  ]);
  t.deepEqual(addServices({ ...request, nodes: [...nodes].reverse() }), result);
});

test("per-service hardware types and mustcoexist with services already there", (t) => {
  const template: ClusterTemplate = {
    name: "t",
    compatibility: { hardwaretypes: [], imagetypes: [], services: [] },
    defaults: { services: ["db"], provider: "p", config: {} },
    constraints: {
      services: { gpu: { hardwaretypes: ["big"] }, backup: { quantities: { max: 1 } } },
      layout: { mustcoexist: [["db", "backup"]] },
    },
  };
  const nodes: ExistingNode[] = [
    { id: "a", nodenum: 1000, services: ["web"], hardwaretype: "small", imagetype: "i" },
    { id: "b", nodenum: 1001, services: ["web"], hardwaretype: "big", imagetype: "i" },
    { id: "c", nodenum: 1002, services: ["db"], hardwaretype: "small", imagetype: "i" },
  ];
  const catalog = { services: [svc("web"), svc("db"), svc("gpu"), svc("backup")] };
  const result = addServices({ template, catalog, nodes, services: ["gpu", "backup"] });
  t.deepEqual(result.placements, [
    { service: "gpu", nodeIds: ["b"] },
    { service: "backup", nodeIds: ["c"] },
  ]);
  // A second db node forces backup onto two nodes, above its max.
  const err = badRequest(t, () =>
    addServices({ template, catalog, nodes: [...nodes, { id: "d", nodenum: 1003, services: ["db"], hardwaretype: "small", imagetype: "i" }], services: ["backup"] }),
  );
  t.is(err.message, "backup must go on 2 nodes (mustcoexist with services already there), but must be on at most 1 node");
  t.like(err.details, { constraint: "quantities", service: "backup", forcedNodes: 2 });
});

test("requests are validated first: empty, already present, unknown, incompatible, requires, conflicts", (t) => {
  let err = badRequest(t, () => addServices(reactorRequest([])));
  t.is(err.message, "no services to add");
  err = badRequest(t, () => addServices(reactorRequest(["datanode"])));
  t.is(err.message, "datanode is already on the cluster");
  err = badRequest(t, () => addServices(reactorRequest(["mysql"])));
  t.is(err.message, "service mysql does not exist");
  err = badRequest(t, () =>
    addServices({ ...reactorRequest(["mysql"]), catalog: { services: [...reactorCatalogAdd.services, svc("mysql")] } }),
  );
  t.is(err.message, "mysql are incompatible with the cluster (template reactor-medium)");
  err = badRequest(t, () => addServices(reactorRequest(["reactor"])));
  t.is(
    err.message,
    [
      "reactor requires zookeeper, which is not on the cluster or in the list of services to add.",
      "reactor requires regionserver, which is not on the cluster or in the list of services to add.",
      "reactor requires nodemanager, which is not on the cluster or in the list of services to add.",
    ].join("\n"),
  );
  const conflicting = { services: [...reactorCatalogAdd.services.filter((s) => s.name !== "zookeeper"), svc("zookeeper", [], ["namenode"])] };
  err = badRequest(t, () => addServices({ ...reactorRequest(["zookeeper"]), catalog: conflicting }));
  t.is(err.message, "zookeeper conflicts with namenode.");
  err = badRequest(t, () => addServices({ ...reactorRequest(["resourcemanager"]), nodes: [] }));
  t.is(err.message, "the cluster has no nodes");
  const broken = [...reactorNodes, { id: "extra", nodenum: 2000, services: ["namenode"], hardwaretype: "large-mem", imagetype: "centos6" }];
  err = badRequest(t, () => addServices({ ...reactorRequest(["resourcemanager"]), nodes: broken }));
  t.is(err.message, "the cluster's current layout already breaks its template: namenode is on 2 nodes, but must be on exactly 1");
});

test("budget - a tiny step budget fails with solver_budget_exhausted", (t) => {
  const err = badRequest(t, () => addServices(reactorRequest(["resourcemanager", "nodemanager", "hbasemaster", "regionserver"]), { maxSteps: 2 }));
  t.is(err.code, SOLVER_BUDGET_EXHAUSTED);
});

// ---------------------------------------------------------------------------------------------------------------
// The test catalog: a k8s-distributed cluster gets its optional services

test("k8s-distributed - the monitoring stack joins the control plane, ingress-nginx every worker, on a 200-node cluster", (t) => {
  const template = fixtureTemplate("k8s-distributed");
  const catalog = fixtureSolverCatalog();
  const cluster = solveLayout({ template, provider: { name: template.defaults.provider }, catalog, numMachines: 200, clusterId: "9", clusterName: "k8s" });
  // prometheus, grafana and postgresql share the control plane's mustcoexist set, whose services are on the
  // first node only: they go there (each at most 1), and nowhere else.
  const toAdd = ["grafana", "prometheus", "postgresql"];
  const result = addServices({ template, catalog, nodes: cluster.nodes, clusterServices: cluster.services, services: toAdd });
  t.deepEqual(result.changedNodes.map((n) => n.id), ["9-1000"]);
  t.deepEqual(result.changedNodes[0]!.addedServices, [...toAdd].sort());
  const after = finalServices(cluster.nodes, result);
  t.deepEqual(checkLayout(template, cluster.nodes.map((n) => ({ ...n, services: after.get(n.id)! }))), []);
  // ingress-nginx shares the workers' set: every node with kubelet gets it.
  const ingress = addServices({ template, catalog, nodes: cluster.nodes, clusterServices: cluster.services, services: ["ingress-nginx"] });
  t.deepEqual(ingress.placements, [{ service: "ingress-nginx", nodeIds: cluster.nodes.slice(1).map((n) => n.id) }]);
  // grafana needs sql-database, which only postgresql provides here: alone it is refused before any solving.
  const err = badRequest(t, () => addServices({ template, catalog, nodes: cluster.nodes, services: ["grafana"] }));
  t.is(err.message, "grafana requires sql-database, which is not on the cluster or in the list of services to add.");
  t.is((err.details as { constraint: string }).constraint, "requires");
});

// ---------------------------------------------------------------------------------------------------------------
// Property test against a literal re-implementation of Coopr's search

const POOL = ["a", "b", "c", "d", "e", "f"];
const HW = ["big", "small"];
const IMG = ["i1", "i2"];
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

interface Layout {
  hw: string;
  img: string;
  services: string[];
}
const keyOf = (l: Layout) => `${l.hw}|${l.img}|${l.services.join(",")}`;

function cooprComparator(x: Layout, y: Layout): number {
  if (x.services.length !== y.services.length) return y.services.length - x.services.length;
  return cmp(x.hw, y.hw) || cmp(x.img, y.img) || x.services.reduce((acc, s, i) => acc || cmp(s, y.services[i]!), 0);
}

/** Coopr: the list of changes (service, [layout key, count]) or null. */
function cooprAddServices(template: ClusterTemplate, nodes: readonly ExistingNode[], toAdd: readonly string[]) {
  const sc = template.constraints?.services ?? {};
  const must = template.constraints?.layout?.mustcoexist ?? [];
  const cant = template.constraints?.layout?.cantcoexist ?? [];
  const setValid = (set: string[], cluster: Set<string>) =>
    cant.every((c) => !c.every((s) => set.includes(s))) &&
    must.every((m) => {
      const mp = m.filter((s) => cluster.has(s));
      return !mp.some((s) => set.includes(s)) || mp.every((s) => set.includes(s));
    });
  const typesValid = (l: Layout) =>
    l.services.every((s) => {
      const c = sc[s];
      return (!c?.hardwaretypes?.length || c.hardwaretypes.includes(l.hw)) && (!c?.imagetypes?.length || c.imagetypes.includes(l.img));
    });
  type Multiset = Map<string, { layout: Layout; count: number }>;
  const isValid = (ms: Multiset) => {
    const counts = new Map<string, number>();
    let total = 0;
    for (const { layout, count } of ms.values()) {
      total += count;
      for (const s of layout.services) counts.set(s, (counts.get(s) ?? 0) + count);
    }
    const cluster = new Set(counts.keys());
    for (const { layout } of ms.values()) if (!setValid(layout.services, cluster) || !typesValid(layout)) return false;
    for (const [s, count] of counts) {
      const q = sc[s]?.quantities;
      if (sc[s] !== undefined && (count < (q?.min ?? 0) || count > (q?.max ?? Infinity) || count > total)) return false;
    }
    return true;
  };
  const initial: Multiset = new Map();
  for (const n of nodes) {
    const layout = { hw: n.hardwaretype, img: n.imagetype, services: [...n.services].sort(cmp) };
    const e = initial.get(keyOf(layout));
    if (e === undefined) initial.set(keyOf(layout), { layout, count: 1 });
    else e.count++;
  }
  const withConstraint = toAdd.filter((s) => s in sc).sort((x, y) => {
    const qx = sc[x]!.quantities;
    const qy = sc[y]!.quantities;
    const mx = qx?.max ?? Infinity;
    const my = qy?.max ?? Infinity;
    if (mx !== my) return mx < my ? -1 : 1;
    return (qy?.min ?? 0) - (qx?.min ?? 0) || cmp(x, y);
  });
  const order = [...withConstraint, ...toAdd.filter((s) => !(s in sc)).sort(cmp)];
  const dfs = (ms: Multiset, i: number): { service: string; picks: [string, number][] }[] | null => {
    if (i === order.length) return [];
    const s = order[i]!;
    const cluster = new Set([...[...ms.values()].flatMap((e) => e.layout.services), s]);
    const expandable = [...ms.values()]
      .filter(({ layout }) => {
        const expanded = { ...layout, services: [...layout.services, s].sort(cmp) };
        return setValid(expanded.services, cluster) && typesValid(expanded);
      })
      .sort((x, y) => cooprComparator(x.layout, y.layout));
    const caps = expandable.map((e) => e.count);
    const q = sc[s]?.quantities;
    const start = Math.min(q?.max ?? Infinity, caps.reduce((x, y) => x + y, 0));
    const lowest = Math.max(q?.min ?? 0, 1);
    for (let k = start; k >= lowest; k--) {
      // Every vector with sum k and c_j <= caps[j], descending lexicographic.
      const vectors: number[][] = [];
      const gen = (j: number, rest: number, acc: number[]) => {
        if (j === caps.length) {
          if (rest === 0) vectors.push([...acc]);
          return;
        }
        for (let c = Math.min(caps[j]!, rest); c >= 0; c--) gen(j + 1, rest - c, [...acc, c]);
      };
      gen(0, k, []);
      for (const v of vectors) {
        const next: Multiset = new Map([...ms].map(([key, e]) => [key, { ...e }]));
        const picks: [string, number][] = [];
        v.forEach((c, j) => {
          if (c === 0) return;
          const from = expandable[j]!.layout;
          picks.push([keyOf(from), c]);
          next.get(keyOf(from))!.count -= c;
          const to = { ...from, services: [...from.services, s].sort(cmp) };
          const e = next.get(keyOf(to));
          if (e === undefined) next.set(keyOf(to), { layout: to, count: c });
          else e.count += c;
        });
        for (const [key, e] of next) if (e.count === 0) next.delete(key);
        if (!isValid(next)) continue;
        const rest = dfs(next, i + 1);
        if (rest !== null) return [{ service: s, picks }, ...rest];
      }
    }
    return null;
  };
  return dfs(initial, 0);
}

/** Applies Coopr-style changes to concrete nodes, lowest nodenum first within a layout. */
function replay(nodes: readonly ExistingNode[], changes: { service: string; picks: [string, number][] }[]): Map<string, string[]> {
  const current = new Map(nodes.map((n) => [n.id, { ...n, services: [...n.services].sort(cmp) }]));
  const sorted = [...nodes].sort((x, y) => x.nodenum - y.nodenum);
  for (const { service, picks } of changes) {
    for (const [key, count] of picks) {
      const chosen = sorted.filter((n) => keyOf({ hw: n.hardwaretype, img: n.imagetype, services: current.get(n.id)!.services }) === key).slice(0, count);
      for (const n of chosen) current.get(n.id)!.services = [...current.get(n.id)!.services, service].sort(cmp);
    }
  }
  return new Map([...current].map(([id, n]) => [id, n.services]));
}

const addArb = fc
  .record({
    nodes: fc.array(fc.record({ services: fc.subarray(POOL.slice(0, 3), { minLength: 1 }), hw: fc.constantFrom(...HW), img: fc.constantFrom(...IMG) }), { minLength: 1, maxLength: 6 }),
    toAdd: fc.subarray(POOL.slice(3), { minLength: 1, maxLength: 3 }),
    must: fc.array(fc.subarray(POOL, { minLength: 2, maxLength: 3 }), { maxLength: 2 }),
    cant: fc.array(fc.subarray(POOL, { minLength: 2, maxLength: 3 }), { maxLength: 2 }),
    constrained: fc.subarray(POOL.slice(3)),
    bounds: fc.array(
      fc.record({
        min: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
        max: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
        hw: fc.subarray(HW, { maxLength: 1 }),
      }),
      { minLength: 3, maxLength: 3 },
    ),
  })
  .map(({ nodes, toAdd, must, cant, constrained, bounds }) => {
    const services: NonNullable<NonNullable<ClusterTemplate["constraints"]>["services"]> = {};
    constrained.forEach((s, i) => {
      const b = bounds[i]!;
      services[s] = {
        hardwaretypes: b.hw,
        quantities: { ...(b.min === undefined ? {} : { min: b.min }), ...(b.max === undefined ? {} : { max: b.max }) },
      };
    });
    const template: ClusterTemplate = {
      name: "t",
      compatibility: { hardwaretypes: [], imagetypes: [], services: [] },
      defaults: { services: [], provider: "p", config: {} },
      constraints: { services, layout: { mustcoexist: must, cantcoexist: cant } },
    };
    const existing: ExistingNode[] = nodes.map((n, i) => ({ id: `n${i}`, nodenum: 1000 + i, services: n.services, hardwaretype: n.hw, imagetype: n.img }));
    return { template, nodes: existing, toAdd };
  });

test("add-services properties - same answer as Coopr's search whenever one exists, else a 400", (t) => {
  let solved = 0;
  let refused = 0;
  fc.assert(
    fc.property(addArb, ({ template, nodes, toAdd }) => {
      const expected = cooprAddServices(template, nodes, toAdd);
      let result: AddServicesResult | undefined;
      try {
        result = addServices({ template, catalog: { services: POOL.map((s) => svc(s)) }, nodes, services: toAdd });
      } catch (err) {
        if (!isCorralError(err) || err.code !== "bad_request") throw err;
      }
      if (expected === null) {
        refused++;
        t.is(result, undefined);
        return;
      }
      solved++;
      t.not(result, undefined);
      const after = finalServices(nodes, result!);
      t.deepEqual(after, replay(nodes, expected));
      // Every requested service placed, and the layout valid.
      for (const s of toAdd) t.true([...after.values()].some((list) => list.includes(s)));
      t.deepEqual(checkLayout(template, nodes.map((n) => ({ ...n, services: after.get(n.id)! }))), []);
    }),
    { numRuns: 1500, seed: 17 },
  );
  t.log(`${solved} solved, ${refused} refused`);
  t.true(solved > 200 && refused > 200);
});
