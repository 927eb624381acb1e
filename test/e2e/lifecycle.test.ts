/**
 * End to end through REST: the test catalog's templates k8s-distributed, data-platform and webapp on the `sim`
 * provider and the `shell` automator. Create reaches active with the solved layout on the nodes, the plans
 * follow the ordering rules, configure (with and without restart) and add services run, delete terminates, and
 * node created/deleted events land on the events stream.
 */
import { eventSubject } from "@corral/contracts";
import { api, type Caller } from "../helpers/api.js";
import { assertOk, show } from "../helpers/assertions.js";
import {
  createActiveCluster,
  dependencyClosure,
  fixtureDependencies,
  planOrderViolations,
  readNodeEvents,
  stageIndex,
  taskKey,
  waitForStatus,
  type ClusterStatus,
  type E2eTenant,
  latestPlan,
  type PlanBody,
  getOk,
  tenantWithSimCatalog,
} from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { fixtureTemplate, rawFixtureCatalog } from "../helpers/fixture-catalog.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 2, provisioners: 2, reconcileIntervalMs: 500 });
type T = SystemTest;

const deps = fixtureDependencies();

const tenantWithCatalog = (t: T, prefix: string): Promise<E2eTenant> => tenantWithSimCatalog(t.context.sys, prefix, { workers: 4 });

const get = <B = any>(t: T, caller: Caller, path: string): Promise<B> => getOk<B>(t.context.sys.baseUrl, caller, path);

/** The newest plan, checked to be what `GET /plans/{planId}` answers too. */
async function latestPlanChecked(t: T, caller: Caller, id: string): Promise<PlanBody> {
  const plan = await latestPlan(t.context.sys.baseUrl, caller, id);
  t.deepEqual(await get(t, caller, `/clusters/${id}/plans/${plan.id}`), plan, "GET /plans/{planId} answers the listed plan");
  return plan;
}

/** Runs an operation that starts a job and waits for the cluster to settle as `expected`. */
async function runJob(t: T, caller: Caller, method: string, path: string, body: unknown, expected: ClusterStatus = "active") {
  const res = await api(t.context.sys.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });
  assertOk(t, res, `${method} ${path}`);
  const id = path.split("/")[2] as string;
  return waitForStatus(t.context.sys.baseUrl, caller, id, expected);
}

const byName = <E extends { name: string }>(list: E[], name: string): E => {
  const e = list.find((x) => x.name === name);
  if (!e) throw new Error(`no ${name}`);
  return e;
};

test("k8s-distributed: create reaches active with the solved layout, node properties, action history and ordered plan", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "k8s");
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "k8s1", clusterTemplate: "k8s-distributed", numMachines: 4 });

  // Status body: exactly the documented fields (docs/api.md).
  const status = await get(t, tenant.user, `/clusters/${id}/status`);
  t.deepEqual(status, { clusterid: id, status: "active", action: "cluster_create", actionstatus: "complete", stepstotal: status.stepstotal, stepscompleted: status.stepstotal });
  t.true(status.stepstotal > 0);

  const cluster = await get(t, tenant.user, `/clusters/${id}`);
  const template = fixtureTemplate("k8s-distributed");
  t.is(cluster.status, "active");
  t.is(cluster.name, "k8s1");
  t.is(cluster.ownerId, "alice");
  t.deepEqual([...cluster.services].sort(), [...template.defaults.services].sort());
  t.is(cluster.provider.name, "aws-eu-west-1");
  t.is(cluster.provider.providertype, "sim");
  t.is(cluster.clusterTemplate.name, "k8s-distributed");
  t.is(cluster.jobs.length, 1);
  t.is(cluster.nodes.length, 4);

  // Layout constraints of the template hold on the nodes.
  const holding = (svc: string) => cluster.nodes.filter((n: any) => n.services.includes(svc));
  for (const single of ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"]) {
    t.is(holding(single).length, 1, `${single} on exactly one node`);
  }
  t.true(holding("kubelet").length >= 2, "at least two kubelets");
  t.true(holding("coredns").length >= 1 && holding("coredns").length <= 2, "one or two coredns");
  for (const [a, b] of [["kube-apiserver", "kubelet"], ["etcd", "kubelet"], ["kube-apiserver", "coredns"], ["kube-scheduler", "kube-proxy"]]) {
    t.false(cluster.nodes.some((n: any) => n.services.includes(a) && n.services.includes(b)), `${a} and ${b} never together`);
  }
  for (const group of [["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"], ["kubelet", "kube-proxy"]]) {
    for (const node of cluster.nodes) {
      const held = group.filter((svc) => node.services.includes(svc));
      t.true(held.length === 0 || held.length === group.length, `${group.join(", ")} coexist on ${node.id}`);
    }
  }
  const everyService = new Set(cluster.nodes.flatMap((n: any) => n.services));
  t.deepEqual([...everyService].sort(), [...cluster.services].sort(), "the nodes hold exactly the cluster's services");

  // Node properties: what the solver chose and what the sim provider answered.
  const raw = rawFixtureCatalog();
  const flavor = byName(raw.hardwaretypes, "medium").providermap["aws-eu-west-1"].flavor;
  const image = byName(raw.imagetypes, "ubuntu24").providermap["aws-eu-west-1"].image;
  const hostnames = new Set<string>();
  const addresses = new Set<string>();
  for (const node of cluster.nodes) {
    t.is(node.clusterId, id);
    const p = node.properties;
    t.is(p.hardwaretype, "medium");
    t.is(p.imagetype, "ubuntu24");
    t.is(p.flavor, flavor);
    t.is(p.image, image);
    t.is(typeof p.hostname, "string");
    t.true(p.hostname.endsWith(".k8s.example.net"), `${p.hostname} ends with the template's dnsSuffix`);
    t.regex(p.ipaddresses.bind_v4, /^10\.\d+\.\d+\.\d+$/);
    t.regex(p.ipaddresses.access_v4, /^100\.\d+\.\d+\.\d+$/);
    t.is(p.ipaddress, p.ipaddresses.bind_v4);
    hostnames.add(p.hostname);
    addresses.add(p.ipaddresses.bind_v4);

    // Action history: node-level actions with an empty service, every service's actions, all complete.
    const actions: Array<{ service: string; action: string; status: string; submitTime: number; statusTime: number }> = node.actions;
    t.deepEqual(
      actions.filter((a) => a.service === "").map((a) => a.action),
      ["CREATE", "CONFIRM", "BOOTSTRAP"],
      `node-level history of ${node.id}`,
    );
    t.true(actions.every((a) => a.status === "complete"), `every action of ${node.id} complete`);
    t.true(actions.every((a) => typeof a.submitTime === "number" && a.statusTime >= a.submitTime));
    for (const svc of node.services as string[]) {
      const expected = Object.keys(byName(raw.services, svc).provisioner.actions)
        .map((a) => a.toUpperCase())
        .filter((a) => ["INSTALL", "CONFIGURE", "INITIALIZE", "START"].includes(a));
      t.deepEqual(
        actions.filter((a) => a.service === svc).map((a) => a.action).sort(),
        expected.sort(),
        `history of ${svc} on ${node.id}`,
      );
    }
  }
  t.is(hostnames.size, 4, "unique hostnames");
  t.is(addresses.size, 4, "unique addresses");

  // The create plan.
  const plan = await latestPlanChecked(t, tenant.user, id);
  t.is(plan.id, cluster.jobs[0]);
  t.is(plan.clusterId, id);
  t.is(plan.action, "CLUSTER_CREATE");
  t.is(plan.stages.flat().length, status.stepstotal);
  t.deepEqual(planOrderViolations(plan, cluster.services, deps), []);
  const stage = stageIndex(plan);
  const at = (task: string, svc: string, node: string) => {
    const s = stage.get(taskKey(task, svc, node));
    if (s === undefined) throw new Error(`no ${task} ${svc} on ${node} in the plan`);
    return s;
  };
  const master = (holding("kube-apiserver")[0] as { id: string }).id;
  const workers: string[] = holding("kubelet").map((n: any) => n.id);
  const dnsNodes: string[] = holding("coredns").map((n: any) => n.id);
  t.true(at("INSTALL", "base", master) < at("INSTALL", "kube-apiserver", master), "kube-apiserver INSTALL after base INSTALL");
  t.true(at("INSTALL", "containerd", master) < at("INSTALL", "kube-apiserver", master), "kube-apiserver INSTALL after containerd INSTALL (install uses)");
  t.true(at("START", "etcd", master) < at("INITIALIZE", "kube-apiserver", master), "kube-apiserver INITIALIZE after etcd START");
  for (const w of workers) {
    t.true(at("INSTALL", "containerd", w) < at("INSTALL", "kubelet", w), "kubelet INSTALL after containerd INSTALL (install requires)");
    t.true(at("START", "kube-apiserver", master) < at("START", "kubelet", w), "kubelet START after kube-apiserver START");
    t.true(at("START", "kubelet", w) < at("START", "kube-proxy", w), "kube-proxy START after kubelet START");
    for (const d of dnsNodes) t.true(at("START", "kubelet", w) < at("START", "coredns", d), "coredns START after every kubelet START (runtime uses)");
  }
  for (const d of dnsNodes) t.true(at("START", "kube-apiserver", master) < at("START", "coredns", d), "coredns START after kube-apiserver START");
  for (const node of cluster.nodes) {
    t.true(at("CREATE", "", node.id) < at("CONFIRM", "", node.id));
    t.true(at("CONFIRM", "", node.id) < at("BOOTSTRAP", "", node.id));
    t.true(at("BOOTSTRAP", "", node.id) < at("INSTALL", "base", node.id));
  }
  // base defines no start: no START task for it; every task of the plan appears once.
  t.false(plan.stages.flat().some((task) => task.service === "base" && task.taskName === "START"));
  t.is(new Set(plan.stages.flat().map((x) => x.id)).size, plan.stages.flat().length, "task ids are unique");
  t.is(plan.currentStage, plan.stages.length - 1);

  // Summary list: the cluster with its progress.
  const list = await get<any[]>(t, tenant.user, "/clusters");
  const summary = list.find((c) => c.id === id);
  t.truthy(summary);
  t.like(summary, {
    id,
    name: "k8s1",
    status: "active",
    numNodes: 4,
    ownerId: "alice",
    provider: { name: "aws-eu-west-1" },
    clusterTemplate: { name: "k8s-distributed" },
    progress: { action: "cluster_create", actionstatus: "complete", stepstotal: status.stepstotal, stepscompleted: status.stepstotal },
  });
});

test("k8s-distributed: adding grafana (with prometheus and the postgresql it needs) places it on the control plane and plans only the new services", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "k8sadd");
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "k8s2", clusterTemplate: "k8s-distributed", numMachines: 3 });
  const before = await get(t, tenant.user, `/clusters/${id}`);
  const added = ["grafana", "prometheus", "postgresql"];

  const settled = await runJob(t, tenant.user, "POST", `/clusters/${id}/services`, { services: added });
  t.is(settled.action, "add_services");
  t.is(settled.actionstatus, "complete");

  const after = await get(t, tenant.user, `/clusters/${id}`);
  t.deepEqual([...after.services].sort(), [...before.services, ...added].sort());
  t.deepEqual([...(await get<string[]>(t, tenant.user, `/clusters/${id}/services`))].sort(), [...after.services].sort());
  const master = after.nodes.find((n: any) => n.services.includes("kube-apiserver"));
  for (const svc of added) t.true(master.services.includes(svc), `${svc} placed with kube-apiserver (mustcoexist)`);
  for (const svc of added) t.is(after.nodes.filter((n: any) => n.services.includes(svc)).length, 1, `${svc} on one node`);

  const plan = await latestPlanChecked(t, tenant.user, id);
  t.is(plan.action, "ADD_SERVICES");
  t.deepEqual(planOrderViolations(plan, after.services, deps), []);
  const tasks = plan.stages.flat();
  t.true(tasks.length > 0);
  // Exactly the added services are installed, configured, initialized and started, on the changed node only; the
  // services already running get no task, not even those the added ones depend on (docs/catalog.md, Plans).
  t.true(dependencyClosure(deps, "runtime", "prometheus", after.services).has("kube-apiserver"), "an added service depends on a running one");
  const unexpected = tasks.filter((task) =>
    task.service === undefined ? task.taskName !== "BOOTSTRAP" || task.nodeId !== master.id : !added.includes(task.service) || task.nodeId !== master.id,
  );
  t.deepEqual(unexpected, [], "only the added services get tasks");
  for (const svc of added) {
    const own = tasks.filter((task) => task.service === svc).map((task) => task.taskName).sort();
    const defined = Object.keys(byName(rawFixtureCatalog().services, svc).provisioner.actions)
      .map((a) => a.toUpperCase())
      .filter((a) => ["INSTALL", "CONFIGURE", "INITIALIZE", "START"].includes(a))
      .sort();
    t.deepEqual(own, defined, `${svc} gets the add-services tasks it defines`);
  }
  const stage = stageIndex(plan);
  const databaseStart = stage.get(taskKey("START", "postgresql", master.id));
  const prometheusStart = stage.get(taskKey("START", "prometheus", master.id));
  const grafanaInit = stage.get(taskKey("INITIALIZE", "grafana", master.id));
  const grafanaStart = stage.get(taskKey("START", "grafana", master.id));
  t.true(databaseStart !== undefined && prometheusStart !== undefined && grafanaInit !== undefined && grafanaStart !== undefined);
  t.true((databaseStart ?? 0) < (grafanaInit ?? 0), "grafana INITIALIZE after postgresql START (it provides sql-database)");
  t.true((databaseStart ?? 0) < (grafanaStart ?? 0), "grafana START after postgresql START");
  t.true((prometheusStart ?? 0) < (grafanaStart ?? 0), "grafana START after prometheus START (runtime uses)");
  const history = master.actions.filter((a: any) => added.includes(a.service));
  t.true(history.length > 0 && history.every((a: any) => a.status === "complete"));

  // Adding a service that is already there, or one outside the template, is a 400.
  for (const services of [["grafana"], ["kafka-broker"], ["no-such-service"]]) {
    const res = await api(baseUrl, "POST", `/clusters/${id}/services`, { ...tenant.user, body: { services } });
    t.is(res.status, 400, `${JSON.stringify(services)}: ${show(res)}`);
  }

  // Delete: a CLUSTER_DELETE plan with one DELETE per node, then terminated.
  const gone = await runJob(t, tenant.user, "DELETE", `/clusters/${id}`, undefined, "terminated");
  t.is(gone.action, "cluster_delete");
  t.is(gone.actionstatus, "complete");
  const deletePlan = await latestPlanChecked(t, tenant.user, id);
  t.is(deletePlan.action, "CLUSTER_DELETE");
  t.deepEqual(deletePlan.stages.flat().map((x) => `${x.taskName} ${x.nodeId}`).sort(), after.nodes.map((n: any) => `DELETE ${n.id}`).sort());
  const final = await get(t, tenant.user, `/clusters/${id}`);
  for (const node of final.nodes) {
    const last = node.actions[node.actions.length - 1];
    t.like(last, { action: "DELETE", service: "", status: "complete" });
  }
});

test("data-platform: configure without and with restart, config readable back", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "data");
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "data1", clusterTemplate: "data-platform", numMachines: 4 });
  const cluster = await get(t, tenant.user, `/clusters/${id}`);
  const template = fixtureTemplate("data-platform");
  t.deepEqual([...cluster.services].sort(), [...template.defaults.services].sort());
  t.is(cluster.nodes.filter((n: any) => n.services.includes("spark-master")).length, 1);
  t.false(cluster.nodes.some((n: any) => n.services.includes("spark-master") && n.services.includes("spark-worker")));
  t.false(cluster.nodes.some((n: any) => n.services.includes("zookeeper") && n.services.includes("kafka-broker")));
  const create = await latestPlanChecked(t, tenant.user, id);
  t.deepEqual(planOrderViolations(create, cluster.services, deps), []);
  const stage = stageIndex(create);
  const masterNode = cluster.nodes.find((n: any) => n.services.includes("spark-master")).id;
  const zookeeperNode = cluster.nodes.find((n: any) => n.services.includes("zookeeper")).id;
  const workerNode = cluster.nodes.find((n: any) => n.services.includes("spark-worker")).id;
  t.true(
    (stage.get(taskKey("START", "zookeeper", zookeeperNode)) ?? Infinity) < (stage.get(taskKey("START", "kafka-broker", workerNode)) ?? -1),
    "kafka-broker START after zookeeper START",
  );
  t.true(
    (stage.get(taskKey("START", "spark-master", masterNode)) ?? Infinity) < (stage.get(taskKey("START", "spark-worker", workerNode)) ?? -1),
    "spark-worker START after spark-master START",
  );
  t.true(
    (stage.get(taskKey("INSTALL", "openjdk", workerNode)) ?? Infinity) < (stage.get(taskKey("INSTALL", "kafka-broker", workerNode)) ?? -1),
    "kafka-broker INSTALL after openjdk INSTALL (it provides java)",
  );

  // The config as created is the template default.
  t.deepEqual(await get(t, tenant.user, `/clusters/${id}/config`), template.defaults.config);

  // Without restart: CLUSTER_CONFIGURE, BOOTSTRAP and CONFIGURE only.
  const config1 = { ...template.defaults.config, extra: { "tuning.level": "3", master: "%host.service.spark-master%" } };
  const s1 = await runJob(t, tenant.user, "PUT", `/clusters/${id}/config`, { config: config1, restart: false });
  t.like(s1, { status: "active", action: "cluster_configure", actionstatus: "complete" });
  t.deepEqual(await get(t, tenant.user, `/clusters/${id}/config`), config1);
  const p1 = await latestPlanChecked(t, tenant.user, id);
  t.is(p1.action, "CLUSTER_CONFIGURE");
  t.deepEqual([...new Set(p1.stages.flat().map((x) => x.taskName))].sort(), ["BOOTSTRAP", "CONFIGURE"]);
  t.deepEqual(planOrderViolations(p1, cluster.services, deps), []);
  const configured = p1.stages.flat().filter((x) => x.taskName === "CONFIGURE").map((x) => `${x.service}@${x.nodeId}`).sort();
  const expectedConfigure = cluster.nodes
    .flatMap((n: any) => n.services.filter((svc: string) => "configure" in byName(rawFixtureCatalog().services, svc).provisioner.actions).map((svc: string) => `${svc}@${n.id}`))
    .sort();
  t.deepEqual(configured, expectedConfigure, "every service that defines configure is configured on every node holding it");

  // With restart (explicit): STOP, CONFIGURE, START in dependency order.
  const config2 = { ...config1, extra: { "tuning.level": "4" } };
  const s2 = await runJob(t, tenant.user, "PUT", `/clusters/${id}/config`, { config: config2, restart: true });
  t.like(s2, { status: "active", action: "cluster_configure_with_restart", actionstatus: "complete" });
  t.deepEqual(await get(t, tenant.user, `/clusters/${id}/config`), config2);
  const p2 = await latestPlanChecked(t, tenant.user, id);
  t.is(p2.action, "CLUSTER_CONFIGURE_WITH_RESTART");
  t.deepEqual([...new Set(p2.stages.flat().map((x) => x.taskName))].sort(), ["BOOTSTRAP", "CONFIGURE", "START", "STOP"]);
  t.deepEqual(planOrderViolations(p2, cluster.services, deps), []);
  const s2stage = stageIndex(p2);
  t.true(
    (s2stage.get(taskKey("STOP", "spark-worker", workerNode)) ?? Infinity) < (s2stage.get(taskKey("STOP", "spark-master", masterNode)) ?? -1),
    "spark-worker is stopped before spark-master",
  );

  // Restart omitted defaults to true.
  const s3 = await runJob(t, tenant.user, "PUT", `/clusters/${id}/config`, { config: template.defaults.config });
  t.is(s3.action, "cluster_configure_with_restart");
  t.is((await latestPlanChecked(t, tenant.user, id)).action, "CLUSTER_CONFIGURE_WITH_RESTART");
  t.deepEqual(await get(t, tenant.user, `/clusters/${id}/config`), template.defaults.config);

  const full = await get(t, tenant.user, `/clusters/${id}`);
  t.is(full.jobs.length, 4);
  const plans = await get<PlanBody[]>(t, tenant.user, `/clusters/${id}/plans`);
  t.deepEqual(
    plans.map((p) => p.action),
    ["CLUSTER_CONFIGURE_WITH_RESTART", "CLUSTER_CONFIGURE_WITH_RESTART", "CLUSTER_CONFIGURE", "CLUSTER_CREATE"],
    "plans newest first",
  );
  t.deepEqual(plans.map((p) => p.id), [...full.jobs].reverse());
});

test("webapp: create, node events on the events stream, delete to terminated", async (t) => {
  const { baseUrl, nc } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "webapp");
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "web1", clusterTemplate: "webapp", numMachines: 3 });
  const cluster = await get(t, tenant.user, `/clusters/${id}`);
  t.deepEqual([...cluster.services].sort(), [...fixtureTemplate("webapp").defaults.services].sort());
  t.is(cluster.nodes.filter((n: any) => n.services.includes("postgresql")).length, 1, "postgresql quantities max 1");
  for (const node of cluster.nodes) {
    const s: string[] = node.services;
    const group = ["nginx", "node-app", "app-config"].filter((x) => s.includes(x));
    t.true(group.length === 0 || group.length === 3, `nginx, node-app and app-config coexist on ${node.id}`);
    t.is(node.properties.flavor, byName(rawFixtureCatalog().hardwaretypes, "small").providermap["aws-us-east-1"].flavor);
  }
  t.deepEqual(planOrderViolations(await latestPlanChecked(t, tenant.user, id), cluster.services, deps), []);
  const nodeIds: string[] = cluster.nodes.map((n: any) => n.id).sort();

  // One message per results batch.
  const subject = eventSubject(tenant.name, "node.changes");
  const nodeEventsOf = async (type: string) =>
    (await readNodeEvents(nc, tenant.name)).filter((e) => e.data.clusterId === id && e.data.type === type);
  const mine = await eventually(
    async () => {
      const events = await nodeEventsOf("node.created");
      return events.length >= nodeIds.length ? events : false;
    },
    { what: "node.created events", timeoutMs: 10_000, intervalMs: 200 },
  );
  t.deepEqual(mine.map((e) => e.data.nodeId).sort(), nodeIds, "one node.created per node");
  for (const e of mine) {
    t.is(e.subject, subject);
    t.like(e.data, { type: "node.created", tenant: tenant.name, clusterId: id, ownerId: "alice" });
    t.is(typeof e.data.time, "number");
  }
  t.deepEqual(await nodeEventsOf("node.deleted"), [], "no node.deleted before the delete");

  t.is((await api(baseUrl, "DELETE", `/clusters/${id}`, tenant.user)).status, 200);
  await waitForStatus(baseUrl, tenant.user, id, "terminated");
  const deleted = await eventually(
    async () => {
      const events = await nodeEventsOf("node.deleted");
      return events.length >= nodeIds.length ? events : false;
    },
    { what: "node.deleted events", timeoutMs: 10_000, intervalMs: 200 },
  );
  t.deepEqual(deleted.map((e) => e.data.nodeId).sort(), nodeIds, "one node.deleted per node");
  for (const e of deleted) {
    t.is(e.subject, subject);
    t.like(e.data, { type: "node.deleted", tenant: tenant.name, clusterId: id, ownerId: "alice" });
    const createdAt = mine.find((c) => c.data.nodeId === e.data.nodeId)?.data.time ?? Infinity;
    t.true(e.data.time >= createdAt, "deleted after created");
  }
});
