/** Plans of the node actions (add_nodes, remove_nodes, replace_node) on the test catalog (docs/catalog.md, Plans). */
import test from "ava";
import fc from "fast-check";
import { isCorralError, type Plan, type PlanNode, type PlanRequest, type Service } from "@corral/contracts";
import { planAction } from "@corral/solver";
import { fixtureServices } from "../../../test/helpers/fixture-catalog.js";

const services = fixtureServices();

const compact = (plan: Plan): string[] =>
  plan.stages.map((s) => s.map((t) => `${t.taskName} ${t.nodeId}${t.service ? ` ${t.service}` : ""}`).join(" | "));

const stagesOf = (plan: Plan, match: (t: Plan["stages"][number][number]) => boolean): number[] =>
  plan.stages.flatMap((s, i) => (s.some(match) ? [i] : []));

/** Every task of (a, sa) is in an earlier stage than every task of (b, sb); both exist. */
const before = (plan: Plan, a: string, sa: string, b: string, sb: string): boolean => {
  const x = stagesOf(plan, (t) => t.taskName === a && t.service === sa);
  const y = stagesOf(plan, (t) => t.taskName === b && t.service === sb);
  return x.length > 0 && y.length > 0 && Math.max(...x) < Math.min(...y);
};

const onNodes = (plan: Plan, ids: readonly string[]): number[] => stagesOf(plan, (t) => ids.includes(t.nodeId));

// webapp as the solver lays it out: the web tier everywhere, postgresql (max 1) on the first node.
const WEB = ["app-config", "base", "nginx", "node-app"];
const webapp: PlanNode[] = [
  { id: "web1", services: [...WEB, "postgresql"] },
  { id: "web2", services: WEB },
  { id: "web3", services: WEB },
];

// k8s-distributed: the control plane and workers (two with coredns).
const CONTROL = ["base", "containerd", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"];
const WORKER = ["base", "containerd", "kube-proxy", "kubelet"];
const k8s: PlanNode[] = [
  { id: "m", services: CONTROL },
  { id: "w1", services: [...WORKER, "coredns"] },
  { id: "w2", services: [...WORKER, "coredns"] },
  { id: "w3", services: WORKER },
];

// ---- add_nodes ----

// web3 joins; the config lists the nginx hosts, so web1 and web2 expand it differently now.
test("add_nodes - the new node is built as a create builds it, then the changed nodes are configured", (t) => {
  const plan = planAction({ action: "add_nodes", nodes: webapp, services, addedNodes: ["web3"], changedNodes: ["web1", "web2"] });
  t.is(plan.action, "ADD_NODES");
  t.deepEqual(compact(plan), [
    "CREATE web3",
    "CONFIRM web3",
    "BOOTSTRAP web3",
    "INSTALL web3 base",
    // app-config defines only configure; node-app install-uses it, nginx runtime-uses node-app
    "CONFIGURE web3 app-config",
    "INSTALL web3 nginx",
    "INSTALL web3 node-app",
    "CONFIGURE web3 base",
    "CONFIGURE web3 nginx",
    "CONFIGURE web3 node-app",
    // node-app requires sql-database, which postgresql provides on web1: running, so it gets no task
    "INITIALIZE web3 node-app",
    "START web3 node-app",
    "START web3 nginx",
    // then every service of the changed nodes configures; CONFIGURE has no cross-service order
    "CONFIGURE web1 app-config | CONFIGURE web2 app-config",
    "CONFIGURE web1 base | CONFIGURE web2 base",
    "CONFIGURE web1 nginx | CONFIGURE web2 nginx",
    "CONFIGURE web1 node-app | CONFIGURE web2 node-app",
    "CONFIGURE web1 postgresql",
  ]);
});

test("add_nodes - with startUnplannedDependencies the running dependencies elsewhere start again first", (t) => {
  const request: PlanRequest = { action: "add_nodes", nodes: webapp, services, addedNodes: ["web3"] };
  t.deepEqual([...new Set(planAction(request).stages.flat().map((x) => x.nodeId))], ["web3"]);
  const plan = planAction({ ...request, options: { startUnplannedDependencies: true } });
  t.deepEqual(compact(plan).slice(0, 2), ["CREATE web3 | START web1 postgresql", "CONFIRM web3"]);
  t.true(before(plan, "START", "postgresql", "INITIALIZE", "node-app"));
  t.deepEqual(compact(plan).slice(1), compact(planAction(request)).slice(1));
});

test("add_nodes - with restart the changed nodes' services stop dependents first and start dependencies first", (t) => {
  const nodes: PlanNode[] = [...k8s, { id: "w4", services: WORKER }, { id: "w5", services: WORKER }];
  const plan = planAction({ action: "add_nodes", nodes, services, addedNodes: ["w4", "w5"], changedNodes: ["m", "w1"], restart: true });
  const arrive = onNodes(plan, ["w4", "w5"]);
  const changedNodes = onNodes(plan, ["m", "w1"]);
  t.true(Math.max(...arrive) < Math.min(...changedNodes), "the new nodes are up before a changed node does anything");
  // the new workers in dependency order among themselves
  t.true(before(plan, "INSTALL", "containerd", "INSTALL", "kubelet"));
  const at = (task: string, service: string, node: string): number =>
    stagesOf(plan, (x) => x.taskName === task && x.service === service && x.nodeId === node)[0]!;
  t.true(at("START", "containerd", "w4") < at("INITIALIZE", "kubelet", "w5"));
  t.true(at("START", "kubelet", "w5") < at("START", "kube-proxy", "w4"));
  // the restart of the changed nodes, across them
  t.true(at("STOP", "coredns", "w1") < at("STOP", "kubelet", "w1"));
  t.true(at("STOP", "kubelet", "w1") < at("STOP", "kube-apiserver", "m"));
  t.true(at("STOP", "kube-scheduler", "m") < at("STOP", "kube-apiserver", "m"));
  t.true(at("STOP", "kube-apiserver", "m") < at("STOP", "etcd", "m"));
  t.true(at("START", "etcd", "m") < at("START", "kube-apiserver", "m"));
  t.true(at("START", "kube-apiserver", "m") < at("START", "kubelet", "w1"));
  t.true(at("STOP", "kubelet", "w1") < at("CONFIGURE", "kubelet", "w1"));
  t.true(at("CONFIGURE", "kubelet", "w1") < at("START", "kubelet", "w1"));
  // nothing on the unchanged old workers
  t.deepEqual(onNodes(plan, ["w2", "w3"]), []);
  t.true(plan.stages.every((s) => new Set(s.map((x) => x.nodeId)).size === s.length));
});

test("add_nodes - a new node without services gets its node-level tasks only", (t) => {
  const plan = planAction({ action: "add_nodes", nodes: [...webapp, { id: "bare", services: [] }], services, addedNodes: ["bare"] });
  t.deepEqual(compact(plan), ["CREATE bare", "CONFIRM bare", "BOOTSTRAP bare"]);
});

// ---- remove_nodes ----

test("remove_nodes - services stopped and removed in dependency order, the machine deleted, then the others reconfigured", (t) => {
  const plan = planAction({
    action: "remove_nodes",
    nodes: webapp,
    services,
    removedNodes: ["web3"],
    changedNodes: ["web1", "web2"],
    restart: true,
  });
  t.is(plan.action, "REMOVE_NODES");
  t.deepEqual(compact(plan), [
    // nginx uses node-app: stopped first; only node-app defines remove
    "STOP web3 nginx",
    "STOP web3 node-app",
    "REMOVE web3 node-app",
    "DELETE web3",
    // the remaining nodes: stop dependents first, configure, start dependencies first
    "STOP web1 nginx | STOP web2 nginx",
    "CONFIGURE web1 app-config | CONFIGURE web2 app-config",
    "CONFIGURE web1 base | CONFIGURE web2 base",
    "STOP web1 node-app | STOP web2 node-app",
    "CONFIGURE web1 nginx | CONFIGURE web2 nginx",
    "STOP web1 postgresql | CONFIGURE web2 node-app",
    "CONFIGURE web1 node-app",
    "CONFIGURE web1 postgresql",
    "START web1 postgresql",
    "START web1 node-app | START web2 node-app",
    "START web1 nginx | START web2 nginx",
  ]);
});

test("remove_nodes - REMOVE follows install dependencies in reverse: kubelet before containerd", (t) => {
  const plan = planAction({ action: "remove_nodes", nodes: k8s, services, removedNodes: ["w2", "w3"] });
  t.deepEqual(compact(plan), [
    "STOP w2 coredns | STOP w3 kube-proxy",
    "STOP w2 kube-proxy",
    "STOP w2 kubelet | STOP w3 kubelet",
    "STOP w2 containerd | STOP w3 containerd",
    "REMOVE w2 kubelet | REMOVE w3 kubelet",
    "REMOVE w2 containerd | REMOVE w3 containerd",
    "DELETE w2 | DELETE w3",
  ]);
});

test("remove_nodes - an unreachable node gets no task", (t) => {
  const plan = planAction({
    action: "remove_nodes",
    nodes: k8s,
    services,
    removedNodes: ["w2", "w3"],
    unreachableNodes: ["w3"],
    changedNodes: ["w1"],
  });
  t.deepEqual(onNodes(plan, ["w3"]), []);
  t.true(Math.max(...onNodes(plan, ["w2"])) < Math.min(...onNodes(plan, ["w1"])));
  t.deepEqual(compact(plan).at(-5), "CONFIGURE w1 base");
});

// ---- replace_node ----

test("replace_node - the new node comes up, then the old machine is deleted, then the peers reconfigure", (t) => {
  const nodes: PlanNode[] = [...webapp, { id: "web4", services: [...WEB, "postgresql"] }];
  const request: PlanRequest = {
    action: "replace_node",
    nodes,
    services,
    addedNodes: ["web4"],
    removedNodes: ["web1"],
    changedNodes: ["web2", "web3"],
  };
  const plan = planAction(request);
  t.is(plan.action, "REPLACE_NODE");
  const peers = [
    "CONFIGURE web2 app-config | CONFIGURE web3 app-config",
    "CONFIGURE web2 base | CONFIGURE web3 base",
    "CONFIGURE web2 nginx | CONFIGURE web3 nginx",
    "CONFIGURE web2 node-app | CONFIGURE web3 node-app",
  ];
  const arrive = [
    "CREATE web4",
    "CONFIRM web4",
    "BOOTSTRAP web4",
    "INSTALL web4 base",
    "CONFIGURE web4 app-config",
    "INSTALL web4 nginx",
    "INSTALL web4 node-app",
    "INSTALL web4 postgresql",
    "CONFIGURE web4 base",
    "CONFIGURE web4 nginx",
    "CONFIGURE web4 node-app",
    "CONFIGURE web4 postgresql",
    // the replacement's own postgresql provides its sql-database: nothing runs on the old node
    "INITIALIZE web4 postgresql",
    "START web4 postgresql",
    "INITIALIZE web4 node-app",
    "START web4 node-app",
    "START web4 nginx",
  ];
  t.deepEqual(compact(plan), [...arrive, "DELETE web1", ...peers]);
  // a machine the provider cannot reach any more is only forgotten
  t.deepEqual(compact(planAction({ ...request, unreachableNodes: ["web1"] })), [...arrive, ...peers]);
});

// ---- errors ----

const badRequest = (t: import("ava").ExecutionContext, request: PlanRequest, message: RegExp): void => {
  const err = t.throws(() => planAction(request));
  t.true(isCorralError(err) && err.status === 400, String(err));
  t.regex(err?.message ?? "", message);
};

test("node actions - malformed node lists are 400s", (t) => {
  const base = { nodes: webapp, services } as const;
  badRequest(t, { ...base, action: "add_nodes" }, /ADD_NODES needs addedNodes/);
  badRequest(t, { ...base, action: "add_nodes", addedNodes: [] }, /ADD_NODES needs addedNodes/);
  badRequest(t, { ...base, action: "add_nodes", addedNodes: ["web3"], removedNodes: ["web2"] }, /ADD_NODES does not take removedNodes/);
  badRequest(t, { ...base, action: "remove_nodes", removedNodes: ["web3"], addedNodes: ["web2"] }, /REMOVE_NODES does not take addedNodes/);
  badRequest(t, { ...base, action: "replace_node", addedNodes: ["web3"] }, /REPLACE_NODE needs removedNodes/);
  badRequest(t, { ...base, action: "add_nodes", addedNodes: ["web9"] }, /addedNodes: "web9" is no node of the request/);
  badRequest(t, { ...base, action: "add_nodes", addedNodes: "web3" as never }, /addedNodes must be an array/);
  badRequest(t, { ...base, action: "add_nodes", addedNodes: ["web3"], changedNodes: ["web3"] }, /node web3 is in both addedNodes and changedNodes/);
  badRequest(t, { ...base, action: "remove_nodes", removedNodes: ["web3"], unreachableNodes: ["web2"] }, /unreachableNodes: node web2 is not removed/);
  badRequest(t, { ...base, action: "add_nodes", addedNodes: ["web3"], restart: "yes" as never }, /restart must be true or false/);
  badRequest(t, { ...base, action: "add_nodes", addedNodes: ["web3"], service: "nginx" }, /does not take a single service/);
  badRequest(t, { ...base, action: "add_nodes", addedNodes: ["web3"], addedServices: ["nginx"] }, /does not take added services/);
  badRequest(t, { ...base, action: "cluster_configure", changedNodes: ["web1"] }, /CLUSTER_CONFIGURE does not take changedNodes/);
  badRequest(t, { ...base, action: "restart_services", restart: true }, /RESTART_SERVICES does not take restart/);
});

// ---- properties ----

const SERVICE_ACTIONS = ["install", "configure", "initialize", "start", "stop", "remove"] as const;
type Kind = "install" | "runtime";

interface NodeActionWorld {
  request: PlanRequest & { nodes: PlanNode[]; services: Service[] };
  added: string[];
  removed: string[];
  unreachable: string[];
  changed: string[];
  restart: boolean;
}

/** Random acyclic services (a service depends only on earlier ones), random nodes, and a node action on them. */
const nodeActionWorld: fc.Arbitrary<NodeActionWorld> = fc
  .record({
    serviceCount: fc.integer({ min: 1, max: 6 }),
    actions: fc.array(fc.subarray([...SERVICE_ACTIONS]), { minLength: 6, maxLength: 6 }),
    deps: fc.array(fc.array(fc.array(fc.nat(7), { maxLength: 2 }), { minLength: 4, maxLength: 4 }), { minLength: 6, maxLength: 6 }),
    placements: fc.array(fc.array(fc.nat(5), { maxLength: 4 }), { minLength: 2, maxLength: 8 }),
    action: fc.constantFrom("add_nodes", "remove_nodes", "replace_node"),
    roles: fc.array(fc.constantFrom("keep", "change", "remove", "unreachable"), { minLength: 8, maxLength: 8 }),
    newCount: fc.integer({ min: 1, max: 3 }),
    restart: fc.boolean(),
  })
  .map((r) => {
    const names = Array.from({ length: r.serviceCount }, (_, i) => `s${i}`);
    const services: Service[] = names.map((name, i) => {
      const earlier = (xs: number[] | undefined): string[] => [...new Set((xs ?? []).filter((x) => x < i).map((x) => names[x]!))];
      const [ir, iu, rr, ru] = r.deps[i]!;
      return {
        name,
        dependencies: {
          provides: [],
          conflicts: [],
          install: { requires: earlier(ir), uses: earlier(iu) },
          runtime: { requires: earlier(rr), uses: earlier(ru) },
        },
        provisioner: { actions: Object.fromEntries(r.actions[i]!.map((k) => [k, { type: "shell", fields: {} }])) },
      };
    });
    const nodes: PlanNode[] = r.placements.map((p, k) => ({
      id: `n${k}`,
      services: [...new Set(p.filter((x) => x < r.serviceCount).map((x) => names[x]!))],
    }));
    const newCount = r.action === "replace_node" ? 1 : r.action === "add_nodes" ? Math.min(r.newCount, nodes.length - 1) : 0;
    const old = nodes.slice(0, nodes.length - newCount);
    const added = nodes.slice(nodes.length - newCount).map((n) => n.id);
    const role = (k: number): string => {
      const given = r.roles[k]!;
      if (r.action === "add_nodes" && (given === "remove" || given === "unreachable")) return "keep";
      return given;
    };
    let removed = old.filter((_n, k) => role(k) === "remove" || role(k) === "unreachable").map((n) => n.id);
    let unreachable = old.filter((_n, k) => role(k) === "unreachable").map((n) => n.id);
    if (r.action === "replace_node") {
      removed = removed.slice(0, 1);
      unreachable = unreachable.filter((id) => removed.includes(id));
    }
    if (r.action !== "add_nodes" && removed.length === 0) removed = [old[0]!.id];
    const changed = old.filter((n, k) => role(k) === "change" && !removed.includes(n.id)).map((n) => n.id);
    const request: NodeActionWorld["request"] = {
      action: r.action,
      nodes,
      services,
      ...(added.length > 0 ? { addedNodes: added } : {}),
      ...(removed.length > 0 ? { removedNodes: removed } : {}),
      ...(unreachable.length > 0 ? { unreachableNodes: unreachable } : {}),
      changedNodes: changed,
      restart: r.restart,
    };
    return { request, added, removed, unreachable, changed, restart: r.restart };
  });

/** Per kind, every service each service on `nodes` depends on (requires and uses), through services on `nodes` only. */
function closures(services: Service[], nodes: PlanNode[]): Record<Kind, Map<string, Set<string>>> {
  const present = new Set(nodes.flatMap((n) => n.services));
  const out = { install: new Map<string, Set<string>>(), runtime: new Map<string, Set<string>>() };
  for (const kind of ["install", "runtime"] as const) {
    const visit = (s: string): Set<string> => {
      const known = out[kind].get(s);
      if (known) return known;
      const deps = services.find((d) => d.name === s)!.dependencies[kind];
      const set = new Set<string>();
      for (const d of [...deps.requires, ...deps.uses]) {
        if (!present.has(d)) continue;
        set.add(d);
        for (const x of visit(d)) set.add(x);
      }
      out[kind].set(s, set);
      return set;
    };
    for (const s of present) visit(s);
  }
  return out;
}

interface Expected {
  /** task key -> phase (0 arrive, 1 leave, 2 reconfigure) */
  phase: Map<string, number>;
  /** pairs that must be in this order */
  edges: [string, string][];
}

function expected(w: NodeActionWorld): Expected {
  const { request } = w;
  const defines = (s: string, task: string): boolean => task.toLowerCase() in request.services.find((d) => d.name === s)!.provisioner.actions;
  const after = closures(request.services, request.nodes.filter((n) => !w.removed.includes(n.id)));
  const before = closures(request.services, request.nodes.filter((n) => !w.added.includes(n.id)));
  const phase = new Map<string, number>();
  const edges: [string, string][] = [];
  const k = (task: string, node: string, service = ""): string => `${task}|${node}|${service}`;
  const nodeOf = (id: string): PlanNode => request.nodes.find((n) => n.id === id)!;
  const chain = (p: number, node: string, order: readonly string[], nodeTasks: readonly string[]): void => {
    const hw = order.filter((t) => nodeTasks.includes(t));
    for (const t of hw) phase.set(k(t, node), p);
    for (const s of nodeOf(node).services) {
      const tasks = order.filter((t) => nodeTasks.includes(t) || defines(s, t)).map((t) => (nodeTasks.includes(t) ? k(t, node) : k(t, node, s)));
      for (const t of tasks) phase.set(t, p);
      for (let i = 1; i < tasks.length; i++) edges.push([tasks[i - 1]!, tasks[i]!]);
    }
  };
  for (const id of w.added) chain(0, id, ["CREATE", "CONFIRM", "BOOTSTRAP", "INSTALL", "CONFIGURE", "INITIALIZE", "START"], ["CREATE", "CONFIRM", "BOOTSTRAP"]);
  for (const id of w.removed.filter((x) => !w.unreachable.includes(x))) {
    chain(1, id, request.action === "remove_nodes" ? ["STOP", "REMOVE", "DELETE"] : ["DELETE"], ["DELETE"]);
  }
  for (const id of w.changed) chain(2, id, w.restart ? ["STOP", "CONFIGURE", "START"] : ["CONFIGURE"], []);
  // cross-service rules within each phase: [from, to, kind, reversed, phase, closures]
  const rules = [
    ["INSTALL", "INSTALL", "install", false, 0, after],
    ["START", "START", "runtime", false, 0, after],
    ["START", "INITIALIZE", "runtime", false, 0, after],
    ["STOP", "STOP", "runtime", true, 1, before],
    ["REMOVE", "REMOVE", "install", true, 1, before],
    ["STOP", "STOP", "runtime", true, 2, after],
    ["START", "START", "runtime", false, 2, after],
  ] as const;
  const tasks = [...phase.keys()].map((key) => key.split("|") as [string, string, string]);
  for (const [from, to, kind, reversed, p, closure] of rules) {
    for (const [tx, nx, x] of tasks) {
      if (tx !== to || phase.get(k(tx, nx, x)) !== p) continue;
      for (const [ty, ny, y] of tasks) {
        if (ty !== from || phase.get(k(ty, ny, y)) !== p || !closure[kind].get(x)?.has(y)) continue;
        edges.push(reversed ? [k(tx, nx, x), k(ty, ny, y)] : [k(ty, ny, y), k(tx, nx, x)]);
      }
    }
  }
  return { phase, edges };
}

test("node action properties - exactly the expected tasks, phases in order, every chain and dependency rule", (t) => {
  fc.assert(
    fc.property(nodeActionWorld, (w) => {
      const plan = planAction(w.request);
      const { phase, edges } = expected(w);
      const stage = new Map<string, number>();
      plan.stages.forEach((s, i) => s.forEach((x) => stage.set(`${x.taskName}|${x.nodeId}|${x.service}`, i)));
      const planned = plan.stages.flat().length;
      if (planned !== stage.size || stage.size !== phase.size || ![...phase.keys()].every((key) => stage.has(key))) return false;
      if (!plan.stages.every((s) => s.length > 0 && new Set(s.map((x) => x.nodeId)).size === s.length)) return false;
      // every task of a phase before every task of a later one
      for (const [a, pa] of phase) for (const [b, pb] of phase) if (pa < pb && stage.get(a)! >= stage.get(b)!) return false;
      return edges.every(([a, b]) => stage.get(a)! < stage.get(b)!);
    }),
    { numRuns: 400 },
  );
  t.pass();
});
