import test from "ava";
import { type Service, isCorralError, type Plan, type PlanNode } from "@corral/contracts";
import { numberTasks, planAction, planGraph } from "@corral/solver";
import { plannerModule } from "@corral/solver/testing";
import { fixtureServices, fixtureTemplate } from "../../../test/helpers/fixture-catalog.js";

// ---- fixtures ----

const catalog = fixtureServices();
const template = fixtureTemplate;

const hadoop = template("hadoop-distributed");
const MASTER = ["base", "hadoop-hdfs-namenode", "hadoop-yarn-resourcemanager", "zookeeper-server", "hbase-master"];
const WORKER = ["base", "hadoop-hdfs-datanode", "hadoop-yarn-nodemanager", "hbase-regionserver"];
// Hand-written layout of hadoop-distributed's default services: one master, two workers.
const hadoopNodes: PlanNode[] = [
  { id: "m", services: MASTER },
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

// ---- scenarios with the fixture catalog ----

test("planner - hadoop-distributed cluster_create on a hand-written layout", (t) => {
  t.deepEqual(hadoop.defaults.services.slice().sort(), [...new Set([...MASTER, ...WORKER])].sort());
  const plan = planAction({ action: "cluster_create", nodes: hadoopNodes, services: catalog });
  t.is(plan.action, "CLUSTER_CREATE");
  t.deepEqual(compact(plan), [
    "CREATE m | CREATE w1 | CREATE w2",
    "CONFIRM m | CONFIRM w1 | CONFIRM w2",
    "BOOTSTRAP m | BOOTSTRAP w1 | BOOTSTRAP w2",
    "INSTALL m base | INSTALL w1 base | INSTALL w2 base",
    "INSTALL w1 hadoop-hdfs-datanode | INSTALL w2 hadoop-hdfs-datanode | INSTALL m hadoop-hdfs-namenode",
    "INSTALL w1 hadoop-yarn-nodemanager | INSTALL w2 hadoop-yarn-nodemanager | INSTALL m hadoop-yarn-resourcemanager",
    "INSTALL m zookeeper-server | CONFIGURE w1 base | CONFIGURE w2 base",
    "CONFIGURE m base",
    "INSTALL m hbase-master | INSTALL w1 hbase-regionserver | INSTALL w2 hbase-regionserver",
    "CONFIGURE w1 hadoop-hdfs-datanode | CONFIGURE w2 hadoop-hdfs-datanode | CONFIGURE m hadoop-hdfs-namenode",
    "CONFIGURE w1 hadoop-yarn-nodemanager | CONFIGURE w2 hadoop-yarn-nodemanager | CONFIGURE m hadoop-yarn-resourcemanager",
    "CONFIGURE m zookeeper-server",
    "CONFIGURE m hbase-master | CONFIGURE w1 hbase-regionserver | CONFIGURE w2 hbase-regionserver",
    "INITIALIZE m hadoop-hdfs-namenode",
    "INITIALIZE m zookeeper-server",
    "START m hadoop-hdfs-namenode",
    "START m zookeeper-server",
    "START w1 hadoop-hdfs-datanode | START w2 hadoop-hdfs-datanode",
    "INITIALIZE m hadoop-yarn-resourcemanager",
    "INITIALIZE m hbase-master",
    "START m hadoop-yarn-resourcemanager",
    "START m hbase-master",
    "START w1 hadoop-yarn-nodemanager | START w2 hadoop-yarn-nodemanager",
    "START w1 hbase-regionserver | START w2 hbase-regionserver",
  ]);
  // base defines only install and configure: no START/INITIALIZE base anywhere.
  t.deepEqual(stageIndex(plan, "START", "base"), []);
  t.true(noNodeTwice(plan));
});

test("planner - full hadoop-distributed catalog: every dependency rule holds on a 6-node layout", (t) => {
  const masterAll = hadoop.compatibility.services.filter(
    (s) => !["hadoop-hdfs-datanode", "hadoop-yarn-nodemanager", "hbase-regionserver"].includes(s),
  );
  const nodes: PlanNode[] = [
    { id: "master", services: masterAll },
    ...[1, 2, 3, 4, 5].map((i) => ({ id: `worker-${i}`, services: WORKER })),
  ];
  const plan = planAction({ action: "CLUSTER_CREATE", nodes, services: catalog });
  t.true(noNodeTwice(plan));
  // install requires: base before everything that requires it; zookeeper before hbase
  for (const s of ["hadoop-hdfs-namenode", "hadoop-hdfs-datanode", "zookeeper-server", "mysql-server", "hive-metastore"]) {
    t.true(before(plan, "INSTALL", "base", "INSTALL", s), s);
  }
  t.true(before(plan, "INSTALL", "zookeeper-server", "INSTALL", "hbase-master"));
  t.true(before(plan, "INSTALL", "zookeeper-server", "INSTALL", "hbase-regionserver"));
  // runtime requires: START of the dependency before INITIALIZE and START of the dependent
  t.true(before(plan, "START", "hadoop-hdfs-namenode", "START", "hadoop-hdfs-datanode"));
  t.true(before(plan, "START", "hadoop-hdfs-datanode", "INITIALIZE", "hadoop-yarn-resourcemanager"));
  t.true(before(plan, "START", "hadoop-hdfs-datanode", "INITIALIZE", "hbase-master"));
  t.true(before(plan, "START", "zookeeper-server", "INITIALIZE", "hbase-master"));
  t.true(before(plan, "START", "hbase-master", "START", "hbase-regionserver"));
  t.true(before(plan, "START", "hive-metastore", "START", "hive-server2"));
  // runtime uses, present on the cluster: historyserver uses resourcemanager; hive-metastore uses mysql
  t.true(before(plan, "START", "hadoop-yarn-resourcemanager", "START", "hadoop-mapreduce-historyserver"));
  t.true(before(plan, "START", "mysql-server", "INITIALIZE", "hive-metastore"));
  // hive-metastore-database only initializes, after mysql started (runtime requires)
  t.true(before(plan, "START", "mysql-server", "INITIALIZE", "hive-metastore-database"));
  // per node chain order
  for (const node of ["master", "worker-3"]) {
    const chain = plan.stages
      .map((s, i) => s.filter((x) => x.nodeId === node && (x.service === "" || x.service === "base")).map((x) => [i, x.taskName] as const))
      .flat();
    t.deepEqual(chain.map(([, n]) => n), ["CREATE", "CONFIRM", "BOOTSTRAP", "INSTALL", "CONFIGURE"]);
  }
});

test("planner - uses of services not on the cluster are ignored (kerberos-master is absent)", (t) => {
  const plan = planAction({ action: "cluster_create", nodes: hadoopNodes, services: catalog });
  t.false(plan.stages.flat().some((x) => x.service.startsWith("kerberos")));
  // adding kerberos-master to the cluster makes every service that uses it start after it
  const withKdc: PlanNode[] = [...hadoopNodes, { id: "kdc", services: ["base", "kerberos-client", "kerberos-master"] }];
  const plan2 = planAction({ action: "cluster_create", nodes: withKdc, services: catalog });
  t.true(before(plan2, "START", "kerberos-master", "START", "hadoop-hdfs-namenode"));
  t.true(before(plan2, "START", "kerberos-master", "INITIALIZE", "zookeeper-server"));
  t.true(before(plan2, "INSTALL", "kerberos-client", "INSTALL", "hadoop-hdfs-datanode"));
  t.true(before(plan2, "INSTALL", "kerberos-client", "INSTALL", "kerberos-master"));
});

test("planner - lamp: install order php before php-modules, no cross edges for services without runtime actions", (t) => {
  const lamp = template("lamp");
  const nodes: PlanNode[] = [
    { id: "web1", services: ["base", "apache-httpd", "php", "php-modules"] },
    { id: "db", services: ["base", "mysql-server"] },
  ];
  t.deepEqual([...new Set(nodes.flatMap((n) => n.services))].sort(), lamp.defaults.services.slice().sort());
  const plan = planAction({ action: "cluster_create", nodes, services: catalog });
  t.true(before(plan, "INSTALL", "php", "INSTALL", "php-modules"));
  t.true(before(plan, "INSTALL", "base", "INSTALL", "php"));
  t.deepEqual(stageIndex(plan, "START", "php"), []);
  t.true(noNodeTwice(plan));
});

test("planner - cluster_delete is one DELETE per node in a single stage", (t) => {
  const plan = planAction({ action: "cluster_delete", nodes: hadoopNodes, services: catalog });
  t.deepEqual(plan, {
    action: "CLUSTER_DELETE",
    stages: [hadoopNodes.map((n) => ({ taskName: "DELETE", nodeId: n.id, service: "" }))],
  });
});

test("planner - cluster_configure: BOOTSTRAP then CONFIGURE of every service, no cross-service order", (t) => {
  const plan = planAction({ action: "cluster_configure", nodes: hadoopNodes, services: catalog });
  t.is(plan.action, "CLUSTER_CONFIGURE");
  t.deepEqual(compact(plan)[0], "BOOTSTRAP m | BOOTSTRAP w1 | BOOTSTRAP w2");
  t.is(plan.stages.length, 1 + MASTER.length); // the master holds the most CONFIGURE tasks
  t.true(plan.stages.slice(1).flat().every((x) => x.taskName === "CONFIGURE"));
  t.true(noNodeTwice(plan));
});

test("planner - cluster_configure_with_restart stops dependents first and starts dependencies first", (t) => {
  const plan = planAction({ action: "cluster_configure_with_restart", nodes: hadoopNodes, services: catalog });
  t.true(before(plan, "STOP", "hbase-regionserver", "STOP", "hbase-master"));
  t.true(before(plan, "STOP", "hbase-master", "STOP", "zookeeper-server"));
  t.true(before(plan, "STOP", "hadoop-hdfs-datanode", "STOP", "hadoop-hdfs-namenode"));
  t.true(before(plan, "STOP", "hadoop-yarn-nodemanager", "STOP", "hadoop-yarn-resourcemanager"));
  t.true(before(plan, "START", "hadoop-hdfs-namenode", "START", "hadoop-hdfs-datanode"));
  t.true(before(plan, "START", "hbase-master", "START", "hbase-regionserver"));
  // per node and service: BOOTSTRAP -> STOP -> CONFIGURE -> START
  const nn = ["BOOTSTRAP", "STOP", "CONFIGURE", "START"].map((a) => stageIndex(plan, a, a === "BOOTSTRAP" ? "" : "hadoop-hdfs-namenode", "m")[0]!);
  t.deepEqual([...nn].sort((a, b) => a - b), nn);
  t.true(noNodeTwice(plan));
});

test("planner - stop_services and start_services for all services", (t) => {
  const stop = planAction({ action: "stop_services", nodes: hadoopNodes, services: catalog });
  t.deepEqual(compact(stop), [
    "STOP w1 hadoop-yarn-nodemanager | STOP w2 hadoop-yarn-nodemanager",
    "STOP w1 hbase-regionserver | STOP w2 hbase-regionserver",
    "STOP m hadoop-yarn-resourcemanager",
    "STOP m hbase-master",
    "STOP w1 hadoop-hdfs-datanode | STOP w2 hadoop-hdfs-datanode | STOP m zookeeper-server",
    "STOP m hadoop-hdfs-namenode",
  ]);
  const start = planAction({ action: "start_services", nodes: hadoopNodes, services: catalog });
  t.deepEqual(compact(start), [
    "START m hadoop-hdfs-namenode",
    "START m zookeeper-server",
    "START w1 hadoop-hdfs-datanode | START w2 hadoop-hdfs-datanode",
    "START m hadoop-yarn-resourcemanager",
    "START m hbase-master",
    "START w1 hadoop-yarn-nodemanager | START w2 hadoop-yarn-nodemanager",
    "START w1 hbase-regionserver | START w2 hbase-regionserver",
  ]);
});

// ---- single-service closures ----

test("planner - starting one service starts everything it depends on first, nothing else", (t) => {
  const plan = planAction({ action: "start_services", service: "hbase-regionserver", nodes: hadoopNodes, services: catalog });
  t.deepEqual([...new Set(plan.stages.flat().map((x) => x.service))].sort(), [
    "hadoop-hdfs-datanode",
    "hadoop-hdfs-namenode",
    "hbase-master",
    "hbase-regionserver",
    "zookeeper-server",
  ]);
  t.true(before(plan, "START", "hbase-master", "START", "hbase-regionserver"));
  t.true(before(plan, "START", "zookeeper-server", "START", "hbase-master"));
  t.true(before(plan, "START", "hadoop-hdfs-datanode", "START", "hbase-master"));
  t.true(before(plan, "START", "hadoop-hdfs-namenode", "START", "hadoop-hdfs-datanode"));
});

test("planner - stopping one service stops every service that depends on it first, nothing else", (t) => {
  const plan = planAction({ action: "stop_services", service: "hadoop-hdfs-datanode", nodes: hadoopNodes, services: catalog });
  t.deepEqual([...new Set(plan.stages.flat().map((x) => x.service))].sort(), [
    "hadoop-hdfs-datanode",
    "hadoop-yarn-nodemanager",
    "hadoop-yarn-resourcemanager",
    "hbase-master",
    "hbase-regionserver",
  ]);
  for (const s of ["hadoop-yarn-resourcemanager", "hbase-master"]) t.true(before(plan, "STOP", s, "STOP", "hadoop-hdfs-datanode"));
  t.true(before(plan, "STOP", "hbase-regionserver", "STOP", "hbase-master"));
  t.true(before(plan, "STOP", "hadoop-yarn-nodemanager", "STOP", "hadoop-yarn-resourcemanager"));
  // the namenode (a dependency) and zookeeper keep running
  t.deepEqual(stageIndex(plan, "STOP", "hadoop-hdfs-namenode"), []);
});

test("planner - restarting one service restarts it and its dependents only; Coopr's re-start of dependencies is an option", (t) => {
  const request = { action: "restart_services", service: "hbase-master", nodes: hadoopNodes, services: catalog } as const;
  const coopr = planAction({ ...request, options: { startUnplannedDependencies: true } });
  t.deepEqual(compact(coopr), [
    "STOP w1 hbase-regionserver | STOP w2 hbase-regionserver | START m hadoop-hdfs-namenode",
    "START m zookeeper-server",
    "STOP m hbase-master | START w1 hadoop-hdfs-datanode | START w2 hadoop-hdfs-datanode",
    "START m hbase-master",
    "START w1 hbase-regionserver | START w2 hbase-regionserver",
  ]);
  const lean = planAction(request);
  t.deepEqual(compact(lean), [
    "STOP w1 hbase-regionserver | STOP w2 hbase-regionserver",
    "STOP m hbase-master",
    "START m hbase-master",
    "START w1 hbase-regionserver | START w2 hbase-regionserver",
  ]);
});

test("planner - add_services plans only the added services on the nodes that got them", (t) => {
  // hbase and zookeeper are added to a running HDFS/YARN cluster (nodes as they are after the change).
  const before0: PlanNode[] = [
    { id: "m", services: ["base", "hadoop-hdfs-namenode", "hadoop-yarn-resourcemanager", "zookeeper-server", "hbase-master"] },
    { id: "w1", services: ["base", "hadoop-hdfs-datanode", "hadoop-yarn-nodemanager", "hbase-regionserver"] },
    { id: "w2", services: ["base", "hadoop-hdfs-datanode", "hadoop-yarn-nodemanager"] },
  ];
  const added = ["zookeeper-server", "hbase-master", "hbase-regionserver"];
  const plan = planAction({ action: "add_services", addedServices: added, nodes: before0, services: catalog });
  t.is(plan.action, "ADD_SERVICES");
  const tasks = plan.stages.flat();
  t.deepEqual(tasks.filter((x) => x.taskName === "BOOTSTRAP").map((x) => x.nodeId), ["m", "w1"]);
  t.false(tasks.some((x) => x.taskName === "INSTALL" && !added.includes(x.service)));
  t.true(before(plan, "INSTALL", "zookeeper-server", "INSTALL", "hbase-master"));
  // running runtime dependencies are started again before INITIALIZE/START of the added services (Coopr)
  t.deepEqual(stageIndex(plan, "START", "hadoop-hdfs-datanode").length, 2);
  t.true(before(plan, "START", "hadoop-hdfs-datanode", "INITIALIZE", "hbase-master"));
  t.true(before(plan, "START", "hbase-master", "START", "hbase-regionserver"));
  t.false(tasks.some((x) => x.service === "hadoop-yarn-nodemanager"));
  const lean = planAction({
    action: "add_services",
    addedServices: added,
    nodes: before0,
    services: catalog,
    options: { startUnplannedDependencies: false },
  });
  t.deepEqual([...new Set(lean.stages.flat().map((x) => x.service))].sort(), ["", ...added].sort());
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
  const graph = planGraph({ action: "start_services", nodes: hadoopNodes, services: catalog });
  const edges = graph.edges.map((e) => `${graph.groups[e.from]!.service} -> ${graph.groups[e.to]!.service}`);
  // regionserver requires hbase-master and zookeeper; hbase-master requires zookeeper: the direct edge is dropped
  t.true(edges.includes("hbase-master -> hbase-regionserver"));
  t.true(edges.includes("zookeeper-server -> hbase-master"));
  t.false(edges.includes("zookeeper-server -> hbase-regionserver"));
  t.false(edges.includes("hadoop-hdfs-namenode -> hbase-master")); // via datanode
  t.deepEqual(
    graph.groups.map((g) => [g.service, g.level, g.nodeIds.length]),
    [
      ["hadoop-hdfs-namenode", 0, 1],
      ["zookeeper-server", 0, 1],
      ["hadoop-hdfs-datanode", 1, 2],
      ["hadoop-yarn-resourcemanager", 2, 1],
      ["hbase-master", 2, 1],
      ["hadoop-yarn-nodemanager", 3, 2],
      ["hbase-regionserver", 3, 2],
    ],
  );
});

// ---- empty plans ----

test("planner - nothing to do yields an empty plan, not a failure", (t) => {
  t.deepEqual(planAction({ action: "start_services", service: "base", nodes: hadoopNodes, services: catalog }), {
    action: "START_SERVICES",
    stages: [],
  });
  t.deepEqual(planAction({ action: "cluster_create", nodes: [], services: catalog }).stages, []);
  t.deepEqual(planAction({ action: "add_services", addedServices: [], nodes: hadoopNodes, services: catalog }).stages, []);
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
  badRequest(t, () => planAction({ action: "start_services", service: "mysql-server", nodes: hadoopNodes, services: catalog }), /service mysql-server is not on the cluster/);
  badRequest(t, () => planAction({ action: "cluster_create", nodes: [{ id: "a", services: ["nope"] }], services: catalog }), /service nope does not exist/);
  badRequest(t, () => planAction({ action: "cluster_create", nodes: [{ id: "a", services: [] }, { id: "a", services: [] }], services: catalog }), /node a appears twice/);
  badRequest(t, () => planAction({ action: "cluster_create", service: "base", nodes: hadoopNodes, services: catalog }), /does not take a single service/);
  badRequest(t, () => planAction({ action: "add_services", addedServices: ["mysql-server"], nodes: hadoopNodes, services: catalog }), /not on the cluster/);
  badRequest(t, () => planAction({ action: "cluster_create", nodes: [{ id: 7 } as never], services: catalog }), /every node needs an id/);
  badRequest(t, () => planAction({ action: "cluster_create", nodes: "x" as never, services: catalog }), /nodes must be an array/);
  const cyclic = [svc("a", ["start"], { rr: ["b"] }), svc("b", ["start"], { ru: ["a"] })];
  const err = t.throws(() => planAction({ action: "start_services", nodes: [{ id: "n", services: ["a", "b"] }], services: cyclic }));
  t.like(err, { status: 400, code: "dependency_cycle", message: "service dependencies form a cycle (runtime): a -> b -> a" });
});

// ---- task ids ----

test("planner - numberTasks numbers tasks deterministically in stage order", (t) => {
  const plan = planAction({ action: "cluster_delete", nodes: hadoopNodes, services: catalog });
  t.deepEqual(numberTasks(plan, { prefix: "plan-7" }).stages[0]!.map((x) => x.id), ["plan-7-1", "plan-7-2", "plan-7-3"]);
  const create = planAction({ action: "cluster_create", nodes: hadoopNodes, services: catalog });
  const ids = numberTasks(create).stages.flat().map((x) => x.id);
  t.deepEqual(ids, ids.map((_x, i) => String(i + 1)));
  t.deepEqual(numberTasks(create, { first: 10 }).stages[0]![0]!.id, "10");
  t.deepEqual(numberTasks(create), numberTasks(planAction({ action: "cluster_create", nodes: hadoopNodes, services: catalog })));
  t.false("id" in create.stages[0]![0]!);
});
