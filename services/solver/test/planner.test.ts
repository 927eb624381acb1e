import test from "ava";
import { type Service, isCorralError, type Plan, type PlanNode } from "@corral/contracts";
import { numberTasks, planAction, planGraph } from "@corral/solver";
import { plannerModule } from "@corral/solver/testing";
import { fixtureServices, fixtureTemplate } from "../../../test/helpers/fixture-catalog.js";

// ---- fixtures ----

const catalog = fixtureServices();
const template = fixtureTemplate;

const k8s = template("k8s-distributed");
const CONTROL = ["base", "containerd", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"];
const WORKER = ["base", "containerd", "coredns", "kube-proxy", "kubelet"];
// k8s-distributed's default services laid out by hand as the solver lays out 3 nodes: the control plane, two workers.
const k8sNodes: PlanNode[] = [
  { id: "m", services: CONTROL },
  { id: "w1", services: WORKER },
  { id: "w2", services: WORKER },
];

const compact = (plan: Plan): string[] =>
  plan.stages.map((s) => s.map((t) => `${t.taskName} ${t.nodeId}${t.service ? ` ${t.service}` : ""}`).join(" | "));

const stageIndex = (plan: Plan, taskName: string, service: string, nodeId?: string): number[] => {
  const out: number[] = [];
  plan.stages.forEach((s, i) => {
    for (const t of s) if (t.taskName === taskName && t.service === service && (!nodeId || t.nodeId === nodeId)) out.push(i);
  });
  return out;
};

/** Every task of (a, sa) is in an earlier stage than every task of (b, sb); both exist. */
const before = (plan: Plan, a: string, sa: string, b: string, sb: string): boolean => {
  const x = stageIndex(plan, a, sa);
  const y = stageIndex(plan, b, sb);
  return x.length > 0 && y.length > 0 && Math.max(...x) < Math.min(...y);
};

const noNodeTwice = (plan: Plan): boolean =>
  plan.stages.every((s) => new Set(s.map((t) => t.nodeId)).size === s.length);

// ---- public surface ----

test("planner - exports exactly the documented API", (t) => {
  t.deepEqual(Object.keys(plannerModule).sort(), [
    "ACTION_TASK_ORDER",
    "ORDERING_RULES",
    "PlanAction",
    "TaskName",
    "numberTasks",
    "parsePlanAction",
    "planAction",
    "planGraph",
    "resolveClusterDependencies",
  ]);
});

// ---- scenarios with the test catalog ----

// Why each stage is where it is: a stage is one ASAP level of the task DAG, cut so that no node has two tasks
// in it (groups in task order, then service name, take the first free slot of each node). INSTALL waits for
// the INSTALL of install dependencies (everything on base; kubelet on containerd; kube-apiserver uses
// containerd); INITIALIZE and START wait for the START of runtime dependencies (kube-apiserver on etcd; the
// controller manager, scheduler and kubelet on kube-apiserver; kubelet on containerd; kube-proxy on kubelet;
// coredns uses kubelet, which already implies kube-apiserver). CONFIGURE has no cross-service order.
test("planner - k8s-distributed cluster_create on a hand-written layout", (t) => {
  t.deepEqual(k8s.defaults.services.slice().sort(), [...new Set([...CONTROL, ...WORKER])].sort());
  const plan = planAction({ action: "cluster_create", nodes: k8sNodes, services: catalog });
  t.is(plan.action, "CLUSTER_CREATE");
  t.deepEqual(compact(plan), [
    // levels 0-2: the node chain
    "CREATE m | CREATE w1 | CREATE w2",
    "CONFIRM m | CONFIRM w1 | CONFIRM w2",
    "BOOTSTRAP m | BOOTSTRAP w1 | BOOTSTRAP w2",
    // level 3
    "INSTALL m base | INSTALL w1 base | INSTALL w2 base",
    // level 4: every INSTALL that waits for base alone, and CONFIGURE base; the control node has five tasks
    "INSTALL m containerd | INSTALL w1 containerd | INSTALL w2 containerd",
    "INSTALL w1 coredns | INSTALL w2 coredns | INSTALL m etcd",
    "INSTALL m kube-controller-manager | INSTALL w1 kube-proxy | INSTALL w2 kube-proxy",
    "INSTALL m kube-scheduler | CONFIGURE w1 base | CONFIGURE w2 base",
    "CONFIGURE m base",
    // level 5: INSTALL after containerd's INSTALL, and the CONFIGURE of level-4 installs
    "INSTALL m kube-apiserver | INSTALL w1 kubelet | INSTALL w2 kubelet",
    "CONFIGURE m containerd | CONFIGURE w1 containerd | CONFIGURE w2 containerd",
    "CONFIGURE w1 coredns | CONFIGURE w2 coredns | CONFIGURE m etcd",
    "CONFIGURE m kube-controller-manager | CONFIGURE w1 kube-proxy | CONFIGURE w2 kube-proxy",
    "CONFIGURE m kube-scheduler",
    // level 6: services without runtime dependencies initialize and start right after their CONFIGURE
    "CONFIGURE m kube-apiserver | CONFIGURE w1 kubelet | CONFIGURE w2 kubelet",
    "INITIALIZE m etcd | START w1 containerd | START w2 containerd",
    "START m containerd",
    // levels 7-12: the runtime chain etcd -> kube-apiserver -> kubelet -> kube-proxy, coredns
    "START m etcd",
    "INITIALIZE m kube-apiserver",
    "START m kube-apiserver",
    "INITIALIZE w1 kubelet | INITIALIZE w2 kubelet | START m kube-controller-manager",
    "START m kube-scheduler",
    "START w1 kubelet | START w2 kubelet",
    "START w1 coredns | START w2 coredns",
    "START w1 kube-proxy | START w2 kube-proxy",
  ]);
  // base defines only install and configure: no START/INITIALIZE base anywhere.
  t.deepEqual(stageIndex(plan, "START", "base"), []);
  t.deepEqual(stageIndex(plan, "INITIALIZE", "base"), []);
  t.true(noNodeTwice(plan));
});

test("planner - webapp cluster_create: ordering passes through app-config, a provided name orders after its provider", (t) => {
  const webapp = template("webapp");
  // The solver's 2-node layout: the web tier everywhere, postgresql (max 1) on the first node.
  const nodes: PlanNode[] = [
    { id: "web1", services: ["app-config", "base", "nginx", "node-app", "postgresql"] },
    { id: "web2", services: ["app-config", "base", "nginx", "node-app"] },
  ];
  t.deepEqual([...new Set(nodes.flatMap((n) => n.services))].sort(), webapp.defaults.services.slice().sort());
  const plan = planAction({ action: "cluster_create", nodes, services: catalog });
  t.deepEqual(compact(plan), [
    "CREATE web1 | CREATE web2",
    "CONFIRM web1 | CONFIRM web2",
    "BOOTSTRAP web1 | BOOTSTRAP web2",
    // app-config defines only configure: its chain starts right after BOOTSTRAP
    "INSTALL web1 base | INSTALL web2 base",
    "CONFIGURE web1 app-config | CONFIGURE web2 app-config",
    // node-app install-uses app-config, which has no INSTALL: the order passes through to base
    "INSTALL web1 nginx | INSTALL web2 nginx",
    "INSTALL web1 node-app | INSTALL web2 node-app",
    "INSTALL web1 postgresql | CONFIGURE web2 base",
    "CONFIGURE web1 base",
    "CONFIGURE web1 nginx | CONFIGURE web2 nginx",
    "CONFIGURE web1 node-app | CONFIGURE web2 node-app",
    "CONFIGURE web1 postgresql",
    "INITIALIZE web1 postgresql",
    "START web1 postgresql",
    // node-app runtime-requires sql-database, which postgresql provides; nginx runtime-uses node-app
    "INITIALIZE web1 node-app | INITIALIZE web2 node-app",
    "START web1 node-app | START web2 node-app",
    "START web1 nginx | START web2 nginx",
  ]);
  t.deepEqual(stageIndex(plan, "INSTALL", "app-config"), []);
  t.deepEqual(stageIndex(plan, "START", "app-config"), []);
  t.true(noNodeTwice(plan));
});

test("planner - full k8s-distributed catalog: every dependency rule holds on a 6-node layout", (t) => {
  const workerOnly = ["kubelet", "kube-proxy", "coredns", "ingress-nginx"];
  const controlAll = k8s.compatibility.services.filter((s) => !workerOnly.includes(s));
  const workerAll = ["base", "containerd", "ingress-nginx", "kube-proxy", "kubelet", "node-exporter"];
  const nodes: PlanNode[] = [
    { id: "control", services: controlAll },
    ...[1, 2, 3, 4, 5].map((i) => ({ id: `worker-${i}`, services: i <= 2 ? [...workerAll, "coredns"] : workerAll })),
  ];
  const plan = planAction({ action: "CLUSTER_CREATE", nodes, services: catalog });
  t.true(noNodeTwice(plan));
  // install requires: base before everything that requires it; containerd before kubelet
  for (const s of ["containerd", "etcd", "kube-apiserver", "kubelet", "postgresql", "grafana", "node-exporter"]) {
    t.true(before(plan, "INSTALL", "base", "INSTALL", s), s);
  }
  t.true(before(plan, "INSTALL", "containerd", "INSTALL", "kubelet"));
  // install uses, present on the cluster: kube-apiserver after containerd
  t.true(before(plan, "INSTALL", "containerd", "INSTALL", "kube-apiserver"));
  // runtime requires: START of the dependency before INITIALIZE and START of the dependent
  t.true(before(plan, "START", "etcd", "INITIALIZE", "kube-apiserver"));
  t.true(before(plan, "START", "kube-apiserver", "INITIALIZE", "kubelet"));
  t.true(before(plan, "START", "containerd", "INITIALIZE", "kubelet"));
  t.true(before(plan, "START", "kube-apiserver", "START", "kube-controller-manager"));
  t.true(before(plan, "START", "kube-apiserver", "START", "kube-scheduler"));
  t.true(before(plan, "START", "kubelet", "START", "kube-proxy"));
  t.true(before(plan, "START", "kubelet", "START", "ingress-nginx"));
  // runtime requires of a provided name: grafana needs sql-database, which postgresql provides
  t.true(before(plan, "START", "postgresql", "INITIALIZE", "grafana"));
  // runtime uses, present on the cluster: coredns uses kubelet; prometheus node-exporter and kube-apiserver;
  // grafana prometheus
  t.true(before(plan, "START", "kubelet", "START", "coredns"));
  t.true(before(plan, "START", "node-exporter", "START", "prometheus"));
  t.true(before(plan, "START", "kube-apiserver", "START", "prometheus"));
  t.true(before(plan, "START", "prometheus", "INITIALIZE", "grafana"));
  // per node chain order
  for (const node of ["control", "worker-3"]) {
    const chain = plan.stages
      .map((s, i) => s.filter((x) => x.nodeId === node && (x.service === "" || x.service === "base")).map((x) => [i, x.taskName] as const))
      .flat();
    t.deepEqual(chain.map(([, n]) => n), ["CREATE", "CONFIRM", "BOOTSTRAP", "INSTALL", "CONFIGURE"]);
  }
});

test("planner - uses of services not on the cluster are ignored (vault-agent is absent)", (t) => {
  /** The cross-service edges into a group of the create graph, as "TASK service" of their sources. */
  const into = (nodes: PlanNode[], task: string, service: string): string[] => {
    const graph = planGraph({ action: "cluster_create", nodes, services: catalog });
    return graph.edges
      .filter((e) => e.scope === "cluster" && graph.groups[e.to]!.taskName === task && graph.groups[e.to]!.service === service)
      .map((e) => `${graph.groups[e.from]!.taskName} ${graph.groups[e.from]!.service}`)
      .sort();
  };
  const plan = planAction({ action: "cluster_create", nodes: k8sNodes, services: catalog });
  t.false(plan.stages.flat().some((x) => x.service === "vault-agent"));
  // kube-apiserver requires etcd and uses vault-agent: only etcd orders it here
  t.deepEqual(into(k8sNodes, "START", "kube-apiserver"), ["START etcd"]);
  t.deepEqual(into(k8sNodes, "INITIALIZE", "kube-apiserver"), ["START etcd"]);
  // adding vault-agent to the cluster makes kube-apiserver, and so everything that needs it, start after it
  const withVault: PlanNode[] = [...k8sNodes, { id: "vault", services: ["base", "vault-agent"] }];
  t.deepEqual(into(withVault, "START", "kube-apiserver"), ["START etcd", "START vault-agent"]);
  t.deepEqual(into(withVault, "INITIALIZE", "kube-apiserver"), ["START etcd", "START vault-agent"]);
  t.deepEqual(into(withVault, "START", "etcd"), [], "etcd does not use vault-agent");
  const plan2 = planAction({ action: "cluster_create", nodes: withVault, services: catalog });
  t.true(before(plan2, "START", "vault-agent", "INITIALIZE", "kube-apiserver"));
  t.true(before(plan2, "START", "vault-agent", "START", "kubelet"));
  t.true(before(plan2, "INSTALL", "base", "INSTALL", "vault-agent"));
});

test("planner - cluster_delete is one DELETE per node in a single stage", (t) => {
  const plan = planAction({ action: "cluster_delete", nodes: k8sNodes, services: catalog });
  t.deepEqual(plan, {
    action: "CLUSTER_DELETE",
    stages: [k8sNodes.map((n) => ({ taskName: "DELETE", nodeId: n.id, service: "" }))],
  });
});

test("planner - cluster_configure: BOOTSTRAP then CONFIGURE of every service, no cross-service order", (t) => {
  const plan = planAction({ action: "cluster_configure", nodes: k8sNodes, services: catalog });
  t.is(plan.action, "CLUSTER_CONFIGURE");
  t.deepEqual(compact(plan)[0], "BOOTSTRAP m | BOOTSTRAP w1 | BOOTSTRAP w2");
  // every control-plane service defines configure, and the control node holds the most of them
  t.is(plan.stages.length, 1 + CONTROL.length);
  t.true(plan.stages.slice(1).flat().every((x) => x.taskName === "CONFIGURE"));
  t.true(noNodeTwice(plan));
});

test("planner - cluster_configure_with_restart stops dependents first and starts dependencies first", (t) => {
  const plan = planAction({ action: "cluster_configure_with_restart", nodes: k8sNodes, services: catalog });
  t.true(before(plan, "STOP", "kube-proxy", "STOP", "kubelet"));
  t.true(before(plan, "STOP", "coredns", "STOP", "kubelet"));
  t.true(before(plan, "STOP", "kubelet", "STOP", "kube-apiserver"));
  t.true(before(plan, "STOP", "kubelet", "STOP", "containerd"));
  t.true(before(plan, "STOP", "kube-scheduler", "STOP", "kube-apiserver"));
  t.true(before(plan, "STOP", "kube-apiserver", "STOP", "etcd"));
  t.true(before(plan, "START", "etcd", "START", "kube-apiserver"));
  t.true(before(plan, "START", "kube-apiserver", "START", "kubelet"));
  t.true(before(plan, "START", "kubelet", "START", "kube-proxy"));
  // per node and service: BOOTSTRAP -> STOP -> CONFIGURE -> START
  const api = ["BOOTSTRAP", "STOP", "CONFIGURE", "START"].map((a) => stageIndex(plan, a, a === "BOOTSTRAP" ? "" : "kube-apiserver", "m")[0]!);
  t.deepEqual([...api].sort((a, b) => a - b), api);
  t.true(noNodeTwice(plan));
});

test("planner - stop_services and start_services for all services", (t) => {
  const stop = planAction({ action: "stop_services", nodes: k8sNodes, services: catalog });
  t.deepEqual(compact(stop), [
    // nothing depends on these
    "STOP w1 coredns | STOP w2 coredns | STOP m kube-controller-manager",
    "STOP w1 kube-proxy | STOP w2 kube-proxy | STOP m kube-scheduler",
    // coredns and kube-proxy need kubelet
    "STOP w1 kubelet | STOP w2 kubelet",
    // kubelet needs containerd and kube-apiserver
    "STOP m containerd | STOP w1 containerd | STOP w2 containerd",
    "STOP m kube-apiserver",
    "STOP m etcd",
  ]);
  const start = planAction({ action: "start_services", nodes: k8sNodes, services: catalog });
  t.deepEqual(compact(start), [
    "START m containerd | START w1 containerd | START w2 containerd",
    "START m etcd",
    "START m kube-apiserver",
    // "kube-scheduler" sorts before "kubelet" ('-' < 'l')
    "START m kube-controller-manager | START w1 kubelet | START w2 kubelet",
    "START m kube-scheduler",
    "START w1 coredns | START w2 coredns",
    "START w1 kube-proxy | START w2 kube-proxy",
  ]);
});

// ---- single-service closures ----

test("planner - starting one service starts everything it depends on first, nothing else", (t) => {
  // coredns requires kube-apiserver and uses kubelet; kubelet requires containerd and kube-apiserver, which requires etcd
  const plan = planAction({ action: "start_services", service: "coredns", nodes: k8sNodes, services: catalog });
  t.deepEqual([...new Set(plan.stages.flat().map((x) => x.service))].sort(), [
    "containerd",
    "coredns",
    "etcd",
    "kube-apiserver",
    "kubelet",
  ]);
  t.true(before(plan, "START", "kubelet", "START", "coredns"));
  t.true(before(plan, "START", "kube-apiserver", "START", "kubelet"));
  t.true(before(plan, "START", "containerd", "START", "kubelet"));
  t.true(before(plan, "START", "etcd", "START", "kube-apiserver"));
});

test("planner - stopping one service stops every service that depends on it first, nothing else", (t) => {
  const plan = planAction({ action: "stop_services", service: "kube-apiserver", nodes: k8sNodes, services: catalog });
  t.deepEqual([...new Set(plan.stages.flat().map((x) => x.service))].sort(), [
    "coredns",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-proxy",
    "kube-scheduler",
    "kubelet",
  ]);
  for (const s of ["kube-controller-manager", "kube-scheduler", "kubelet"]) t.true(before(plan, "STOP", s, "STOP", "kube-apiserver"));
  t.true(before(plan, "STOP", "kube-proxy", "STOP", "kubelet"));
  t.true(before(plan, "STOP", "coredns", "STOP", "kubelet"));
  // etcd and containerd (dependencies) keep running
  t.deepEqual(stageIndex(plan, "STOP", "etcd"), []);
  t.deepEqual(stageIndex(plan, "STOP", "containerd"), []);
});

test("planner - restarting one service restarts it and its dependents only; Coopr's re-start of dependencies is an option", (t) => {
  const request = { action: "restart_services", service: "kubelet", nodes: k8sNodes, services: catalog } as const;
  // kubelet's dependencies (containerd, kube-apiserver, etcd) are started again, the nearest first
  const coopr = planAction({ ...request, options: { startUnplannedDependencies: true } });
  t.deepEqual(compact(coopr), [
    "STOP w1 coredns | STOP w2 coredns | START m containerd",
    "STOP w1 kube-proxy | STOP w2 kube-proxy | START m etcd",
    "START w1 containerd | START w2 containerd",
    "STOP w1 kubelet | STOP w2 kubelet | START m kube-apiserver",
    "START w1 kubelet | START w2 kubelet",
    "START w1 coredns | START w2 coredns",
    "START w1 kube-proxy | START w2 kube-proxy",
  ]);
  const lean = planAction(request);
  t.deepEqual(compact(lean), [
    "STOP w1 coredns | STOP w2 coredns",
    "STOP w1 kube-proxy | STOP w2 kube-proxy",
    "STOP w1 kubelet | STOP w2 kubelet",
    "START w1 kubelet | START w2 kubelet",
    "START w1 coredns | START w2 coredns",
    "START w1 kube-proxy | START w2 kube-proxy",
  ]);
});

test("planner - add_services plans only the added services on the nodes that got them", (t) => {
  // The monitoring stack joins the control plane of a running cluster that has node-exporter on every node
  // (nodes as they are after the change).
  const monitored: PlanNode[] = [
    { id: "m", services: [...CONTROL, "grafana", "node-exporter", "postgresql", "prometheus"] },
    { id: "w1", services: [...WORKER, "node-exporter"] },
    { id: "w2", services: [...WORKER, "node-exporter"] },
  ];
  const added = ["prometheus", "grafana", "postgresql"];
  const plan = planAction({ action: "add_services", addedServices: added, nodes: monitored, services: catalog });
  t.is(plan.action, "ADD_SERVICES");
  // Running runtime dependencies are started again before INITIALIZE/START of the added services, as Coopr
  // did, on every node that runs them: node-exporter (used by prometheus) on the workers too, which get
  // nothing else; kube-apiserver (used by prometheus) after etcd.
  t.deepEqual(compact(plan), [
    "BOOTSTRAP m | START w1 node-exporter | START w2 node-exporter",
    "START m etcd",
    "START m node-exporter",
    "INSTALL m grafana",
    "INSTALL m postgresql",
    "INSTALL m prometheus",
    "START m kube-apiserver",
    "CONFIGURE m grafana",
    "CONFIGURE m postgresql",
    "CONFIGURE m prometheus",
    "INITIALIZE m postgresql",
    "START m prometheus",
    "START m postgresql",
    // grafana requires sql-database (postgresql provides it) and uses prometheus
    "INITIALIZE m grafana",
    "START m grafana",
  ]);
  const tasks = plan.stages.flat();
  t.deepEqual(tasks.filter((x) => x.taskName === "BOOTSTRAP").map((x) => x.nodeId), ["m"]);
  t.false(tasks.some((x) => x.taskName === "INSTALL" && !added.includes(x.service)));
  // services that none of the added ones depends on get no task
  for (const s of ["kubelet", "kube-proxy", "coredns", "kube-scheduler", "containerd"]) t.false(tasks.some((x) => x.service === s), s);
  const lean = planAction({
    action: "add_services",
    addedServices: added,
    nodes: monitored,
    services: catalog,
    options: { startUnplannedDependencies: false },
  });
  t.deepEqual([...new Set(lean.stages.flat().map((x) => x.service))].sort(), ["", ...added].sort());
  t.true(before(lean, "START", "postgresql", "INITIALIZE", "grafana"));
  t.true(before(lean, "START", "prometheus", "INITIALIZE", "grafana"));
});

// ---- provides, pass-through, synthetic graphs ----

const svc = (
  name: string,
  actions: string[],
  deps: { provides?: string[]; ir?: string[]; iu?: string[]; rr?: string[]; ru?: string[] } = {},
): Service => ({
  name,
  dependencies: {
    provides: deps.provides ?? [],
    conflicts: [],
    install: { requires: deps.ir ?? [], uses: deps.iu ?? [] },
    runtime: { requires: deps.rr ?? [], uses: deps.ru ?? [] },
  },
  provisioner: { actions: Object.fromEntries(actions.map((a) => [a, { type: "shell", fields: {} }])) },
});

test("planner - a dependency on a provided name orders after every provider on the cluster", (t) => {
  const services = [
    svc("nginx", ["install", "start"], { provides: ["web-server"] }),
    svc("apache-httpd", ["install", "start"], { provides: ["web-server"] }),
    svc("app", ["install", "start"], { ir: ["web-server"], rr: ["web-server"] }),
  ];
  const nodes = [
    { id: "a", services: ["nginx", "app"] },
    { id: "b", services: ["apache-httpd"] },
  ];
  const plan = planAction({ action: "cluster_create", nodes, services });
  t.true(before(plan, "INSTALL", "nginx", "INSTALL", "app"));
  t.true(before(plan, "INSTALL", "apache-httpd", "INSTALL", "app"));
  t.true(before(plan, "START", "nginx", "START", "app"));
  t.true(before(plan, "START", "apache-httpd", "START", "app"));
  // with only one provider on the cluster the other one does not matter
  const plan2 = planAction({ action: "start_services", service: "app", nodes: [{ id: "a", services: ["nginx", "app"] }], services });
  t.deepEqual(compact(plan2), ["START a nginx", "START a app"]);
});

test("planner - ordering passes through services that lack the action", (t) => {
  // a -> b -> c at runtime; b has no start: START c still precedes START a.
  const services = [svc("a", ["start"], { rr: ["b"] }), svc("b", ["install"], { rr: ["c"] }), svc("c", ["start"])];
  const nodes = [{ id: "n1", services: ["a"] }, { id: "n2", services: ["b", "c"] }];
  const plan = planAction({ action: "start_services", nodes, services });
  t.deepEqual(compact(plan), ["START n2 c", "START n1 a"]);
  const graph = planGraph({ action: "start_services", nodes, services });
  t.deepEqual(
    graph.edges.map((e) => `${graph.groups[e.from]!.service}->${graph.groups[e.to]!.service}:${e.scope}`),
    ["c->a:cluster"],
  );
});

test("planner - planGraph keeps only direct dependencies (transitive reduction)", (t) => {
  const graph = planGraph({ action: "start_services", nodes: k8sNodes, services: catalog });
  const edges = graph.edges.map((e) => `${graph.groups[e.from]!.service} -> ${graph.groups[e.to]!.service}`);
  // coredns requires kube-apiserver and uses kubelet, which requires kube-apiserver: the direct edge is dropped;
  // kubelet reaches etcd through kube-apiserver
  t.deepEqual(edges, [
    "containerd -> kubelet",
    "etcd -> kube-apiserver",
    "kube-apiserver -> kube-controller-manager",
    "kube-apiserver -> kube-scheduler",
    "kube-apiserver -> kubelet",
    "kubelet -> coredns",
    "kubelet -> kube-proxy",
  ]);
  t.false(edges.includes("kube-apiserver -> coredns"));
  t.false(edges.includes("etcd -> kubelet"));
  t.true(graph.edges.every((e) => e.scope === "cluster"));
  t.deepEqual(
    graph.groups.map((g) => [g.service, g.level, g.nodeIds.length]),
    [
      ["containerd", 0, 3],
      ["etcd", 0, 1],
      ["kube-apiserver", 1, 1],
      ["kube-controller-manager", 2, 1],
      ["kube-scheduler", 2, 1],
      ["kubelet", 2, 2],
      ["coredns", 3, 2],
      ["kube-proxy", 3, 2],
    ],
  );
});

// ---- empty plans ----

test("planner - nothing to do yields an empty plan, not a failure", (t) => {
  t.deepEqual(planAction({ action: "start_services", service: "base", nodes: k8sNodes, services: catalog }), {
    action: "START_SERVICES",
    stages: [],
  });
  t.deepEqual(planAction({ action: "cluster_create", nodes: [], services: catalog }).stages, []);
  t.deepEqual(planAction({ action: "add_services", addedServices: [], nodes: k8sNodes, services: catalog }).stages, []);
  const baseOnly = [{ id: "x", services: ["base"] }];
  t.deepEqual(planAction({ action: "stop_services", nodes: baseOnly, services: catalog }).stages, []);
  t.deepEqual(planAction({ action: "restart_services", nodes: baseOnly, services: catalog }).stages, []);
});

test("planner - nodes without services still get their node-level tasks", (t) => {
  const plan = planAction({ action: "cluster_create", nodes: [{ id: "bare", services: [] }], services: catalog });
  t.deepEqual(compact(plan), ["CREATE bare", "CONFIRM bare", "BOOTSTRAP bare"]);
});

// ---- errors ----

const badRequest = (t: import("ava").ExecutionContext, fn: () => unknown, message: RegExp): void => {
  const err = t.throws(fn);
  t.true(isCorralError(err) && err.status === 400, String(err));
  t.regex(err?.message ?? "", message);
};

test("planner - bad input is a BadRequestError", (t) => {
  badRequest(t, () => planAction({ action: "explode" as never, nodes: [], services: catalog }), /unknown action "explode"/);
  badRequest(t, () => planAction({ action: "start_services", service: "postgresql", nodes: k8sNodes, services: catalog }), /service postgresql is not on the cluster/);
  badRequest(t, () => planAction({ action: "cluster_create", nodes: [{ id: "a", services: ["nope"] }], services: catalog }), /service nope does not exist/);
  badRequest(t, () => planAction({ action: "cluster_create", nodes: [{ id: "a", services: [] }, { id: "a", services: [] }], services: catalog }), /node a appears twice/);
  badRequest(t, () => planAction({ action: "cluster_create", service: "base", nodes: k8sNodes, services: catalog }), /does not take a single service/);
  badRequest(t, () => planAction({ action: "add_services", addedServices: ["postgresql"], nodes: k8sNodes, services: catalog }), /not on the cluster/);
  badRequest(t, () => planAction({ action: "cluster_create", nodes: [{ id: 7 } as never], services: catalog }), /every node needs an id/);
  badRequest(t, () => planAction({ action: "cluster_create", nodes: "x" as never, services: catalog }), /nodes must be an array/);
  const cyclic = [svc("a", ["start"], { rr: ["b"] }), svc("b", ["start"], { ru: ["a"] })];
  const err = t.throws(() => planAction({ action: "start_services", nodes: [{ id: "n", services: ["a", "b"] }], services: cyclic }));
  t.like(err, { status: 400, code: "dependency_cycle", message: "service dependencies form a cycle (runtime): a -> b -> a" });
});

// ---- task ids ----

test("planner - numberTasks numbers tasks deterministically in stage order", (t) => {
  const plan = planAction({ action: "cluster_delete", nodes: k8sNodes, services: catalog });
  t.deepEqual(numberTasks(plan, { prefix: "plan-7" }).stages[0]!.map((x) => x.id), ["plan-7-1", "plan-7-2", "plan-7-3"]);
  const create = planAction({ action: "cluster_create", nodes: k8sNodes, services: catalog });
  const ids = numberTasks(create).stages.flat().map((x) => x.id);
  t.deepEqual(ids, ids.map((_x, i) => String(i + 1)));
  t.deepEqual(numberTasks(create, { first: 10 }).stages[0]![0]!.id, "10");
  t.deepEqual(numberTasks(create), numberTasks(planAction({ action: "cluster_create", nodes: k8sNodes, services: catalog })));
  t.false("id" in create.stages[0]![0]!);
});
