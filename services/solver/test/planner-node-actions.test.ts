/** Plans of the node actions (add_nodes, remove_nodes, replace_node) on the test catalog (docs/catalog.md, Plans). */
import test from "ava";
import { isCorralError, type Plan, type PlanNode, type PlanRequest } from "@corral/contracts";
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
