/**
 * End to end through REST: the Coopr fixture templates hadoop-distributed, cdap-distributed and lamp on the `sim`
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

/** The cluster's newest plan; asserts `GET /plans/{planId}` answers the same object. */
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

test("hadoop-distributed: create reaches active with the solved layout, node properties, action history and ordered plan", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "hadoop");
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "hadoop1", clusterTemplate: "hadoop-distributed", numMachines: 4 });

  // Status body: exactly the spec's fields.
  const status = await get(t, tenant.user, `/clusters/${id}/status`);
  t.deepEqual(status, { clusterid: id, status: "active", action: "cluster_create", actionstatus: "complete", stepstotal: status.stepstotal, stepscompleted: status.stepstotal });
  t.true(status.stepstotal > 0);

  const cluster = await get(t, tenant.user, `/clusters/${id}`);
  const template = fixtureTemplate("hadoop-distributed");
  t.is(cluster.status, "active");
  t.is(cluster.name, "hadoop1");
  t.is(cluster.ownerId, "alice");
  t.deepEqual([...cluster.services].sort(), [...template.defaults.services].sort());
  t.is(cluster.provider.name, "rackspace");
  t.is(cluster.provider.providertype, "sim");
  t.is(cluster.clusterTemplate.name, "hadoop-distributed");
  t.is(cluster.jobs.length, 1);
  t.is(cluster.nodes.length, 4);

  // Layout constraints of the template hold on the nodes.
  const holding = (svc: string) => cluster.nodes.filter((n: any) => n.services.includes(svc));
  for (const single of ["hadoop-hdfs-namenode", "hadoop-yarn-resourcemanager", "zookeeper-server", "hbase-master"]) {
    t.is(holding(single).length, 1, `${single} on exactly one node`);
  }
  t.true(holding("hadoop-hdfs-datanode").length >= 2, "at least two datanodes");
  for (const [a, b] of [["hadoop-hdfs-namenode", "hadoop-hdfs-datanode"], ["hbase-master", "hbase-regionserver"], ["hadoop-yarn-resourcemanager", "hadoop-yarn-nodemanager"]]) {
    t.false(cluster.nodes.some((n: any) => n.services.includes(a) && n.services.includes(b)), `${a} and ${b} never together`);
  }
  const everyService = new Set(cluster.nodes.flatMap((n: any) => n.services));
  t.deepEqual([...everyService].sort(), [...cluster.services].sort(), "the nodes hold exactly the cluster's services");

  // Node properties: what the solver chose and what the sim provider answered.
  const raw = rawFixtureCatalog();
  const flavor = byName(raw.hardwaretypes, "standard-large").providermap.rackspace.flavor;
  const image = byName(raw.imagetypes, "ubuntu12").providermap.rackspace.image;
  const hostnames = new Set<string>();
  const addresses = new Set<string>();
  for (const node of cluster.nodes) {
    t.is(node.clusterId, id);
    const p = node.properties;
    t.is(p.hardwaretype, "standard-large");
    t.is(p.imagetype, "ubuntu12");
    t.is(p.flavor, flavor);
    t.is(p.image, image);
    t.is(typeof p.hostname, "string");
    t.true(p.hostname.length > 0);
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
  const master = (holding("hadoop-hdfs-namenode")[0] as { id: string }).id;
  const workers: string[] = holding("hadoop-hdfs-datanode").map((n: any) => n.id);
  t.true(at("INSTALL", "base", master) < at("INSTALL", "hadoop-hdfs-namenode", master), "namenode INSTALL after base INSTALL");
  for (const w of workers) {
    t.true(at("START", "hadoop-hdfs-namenode", master) < at("START", "hadoop-hdfs-datanode", w), "datanode START after namenode START");
    t.true(at("START", "hbase-master", master) < at("START", "hbase-regionserver", w), "regionserver START after hbase-master START");
    t.true(at("START", "hadoop-yarn-resourcemanager", master) < at("START", "hadoop-yarn-nodemanager", w), "nodemanager START after RM START");
    t.true(at("START", "hadoop-hdfs-datanode", w) < at("START", "hbase-master", master), "hbase-master START after every datanode START");
  }
  t.true(at("START", "zookeeper-server", master) < at("INITIALIZE", "hbase-master", master), "hbase-master INITIALIZE after zookeeper START");
  t.true(at("INSTALL", "zookeeper-server", master) < at("INSTALL", "hbase-master", master), "hbase-master INSTALL after zookeeper INSTALL");
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
    name: "hadoop1",
    status: "active",
    numNodes: 4,
    ownerId: "alice",
    provider: { name: "rackspace" },
    clusterTemplate: { name: "hadoop-distributed" },
    progress: { action: "cluster_create", actionstatus: "complete", stepstotal: status.stepstotal, stepscompleted: status.stepstotal },
  });
});

test("hadoop-distributed: adding hive-metastore (with mysql-server and its database) places it on the master and plans only the new services", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "hadoopadd");
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "hadoop2", clusterTemplate: "hadoop-distributed", numMachines: 3 });
  const before = await get(t, tenant.user, `/clusters/${id}`);
  const added = ["hive-metastore", "mysql-server", "hive-metastore-database"];

  const settled = await runJob(t, tenant.user, "POST", `/clusters/${id}/services`, { services: added });
  t.is(settled.action, "add_services");
  t.is(settled.actionstatus, "complete");

  const after = await get(t, tenant.user, `/clusters/${id}`);
  t.deepEqual([...after.services].sort(), [...before.services, ...added].sort());
  t.deepEqual([...(await get<string[]>(t, tenant.user, `/clusters/${id}/services`))].sort(), [...after.services].sort());
  const master = after.nodes.find((n: any) => n.services.includes("hadoop-hdfs-namenode"));
  for (const svc of added) t.true(master.services.includes(svc), `${svc} placed with the namenode (mustcoexist)`);
  t.is(after.nodes.filter((n: any) => n.services.includes("mysql-server")).length, 1);

  const plan = await latestPlanChecked(t, tenant.user, id);
  t.is(plan.action, "ADD_SERVICES");
  t.deepEqual(planOrderViolations(plan, after.services, deps), []);
  const tasks = plan.stages.flat();
  t.true(tasks.length > 0);
  // Exactly the added services are installed, configured and initialized, on the changed node only; existing
  // services get no task but a START when an added service runtime-depends on them (Coopr re-runs those).
  const runtimeDeps = new Set(added.flatMap((svc) => [...dependencyClosure(deps, "runtime", svc, after.services)]));
  const unexpected = tasks.filter((task) =>
    task.service === undefined
      ? task.taskName !== "BOOTSTRAP" || task.nodeId !== master.id
      : added.includes(task.service)
        ? task.nodeId !== master.id
        : task.taskName !== "START" || !runtimeDeps.has(task.service),
  );
  t.deepEqual(unexpected, [], "only the added services (and STARTs of their runtime dependencies) get tasks");
  for (const svc of added) {
    const own = tasks.filter((task) => task.service === svc).map((task) => task.taskName).sort();
    const defined = Object.keys(byName(rawFixtureCatalog().services, svc).provisioner.actions)
      .map((a) => a.toUpperCase())
      .filter((a) => ["INSTALL", "CONFIGURE", "INITIALIZE", "START"].includes(a))
      .sort();
    t.deepEqual(own, defined, `${svc} gets the add-services tasks it defines`);
  }
  const stage = stageIndex(plan);
  const mysqlStart = stage.get(taskKey("START", "mysql-server", master.id));
  const dbInit = stage.get(taskKey("INITIALIZE", "hive-metastore-database", master.id));
  const metastoreStart = stage.get(taskKey("START", "hive-metastore", master.id));
  t.true(mysqlStart !== undefined && dbInit !== undefined && metastoreStart !== undefined);
  t.true((mysqlStart ?? 0) < (dbInit ?? 0), "hive-metastore-database INITIALIZE after mysql-server START");
  t.true((mysqlStart ?? 0) < (metastoreStart ?? 0), "hive-metastore START after mysql-server START");
  const history = master.actions.filter((a: any) => added.includes(a.service));
  t.true(history.length > 0 && history.every((a: any) => a.status === "complete"));

  // Adding a service that is already there, or one outside the template, is a 400.
  for (const services of [["hive-metastore"], ["cdap"], ["no-such-service"]]) {
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

test("cdap-distributed: configure without and with restart, config readable back", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "cdap");
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "cdap1", clusterTemplate: "cdap-distributed", numMachines: 4 });
  const cluster = await get(t, tenant.user, `/clusters/${id}`);
  const template = fixtureTemplate("cdap-distributed");
  t.deepEqual([...cluster.services].sort(), [...template.defaults.services].sort());
  t.is(cluster.nodes.filter((n: any) => n.services.includes("cdap")).length, 1);
  t.false(cluster.nodes.some((n: any) => n.services.includes("cdap") && n.services.includes("hadoop-hdfs-datanode")));
  const create = await latestPlanChecked(t, tenant.user, id);
  t.deepEqual(planOrderViolations(create, cluster.services, deps), []);
  const stage = stageIndex(create);
  const cdapNode = cluster.nodes.find((n: any) => n.services.includes("cdap")).id;
  const hbaseNode = cluster.nodes.find((n: any) => n.services.includes("hbase-master")).id;
  t.true(
    (stage.get(taskKey("START", "hbase-master", hbaseNode)) ?? Infinity) < (stage.get(taskKey("START", "cdap", cdapNode)) ?? -1),
    "cdap START after hbase-master START",
  );
  t.true(
    (stage.get(taskKey("INSTALL", "hbase-master", hbaseNode)) ?? Infinity) < (stage.get(taskKey("INSTALL", "cdap", cdapNode)) ?? -1),
    "cdap INSTALL after hbase-master INSTALL",
  );

  // The config as created is the template default.
  t.deepEqual(await get(t, tenant.user, `/clusters/${id}/config`), template.defaults.config);

  // Without restart: CLUSTER_CONFIGURE, BOOTSTRAP and CONFIGURE only.
  const config1 = { ...template.defaults.config, extra: { "tuning.level": "3", nn: "%host.service.hadoop-hdfs-namenode%" } };
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
    (s2stage.get(taskKey("STOP", "cdap", cdapNode)) ?? Infinity) < (s2stage.get(taskKey("STOP", "hbase-master", hbaseNode)) ?? -1),
    "cdap is stopped before hbase-master",
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

test("lamp: create, node events on the events stream, delete to terminated", async (t) => {
  const { baseUrl, nc } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "lamp");
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "lamp1", clusterTemplate: "lamp", numMachines: 3 });
  const cluster = await get(t, tenant.user, `/clusters/${id}`);
  t.deepEqual([...cluster.services].sort(), [...fixtureTemplate("lamp").defaults.services].sort());
  t.is(cluster.nodes.filter((n: any) => n.services.includes("mysql-server")).length, 1, "mysql-server quantities max 1");
  for (const node of cluster.nodes) {
    const s: string[] = node.services;
    const group = ["apache-httpd", "php", "php-modules"].filter((x) => s.includes(x));
    t.true(group.length === 0 || group.length === 3, `apache-httpd, php and php-modules coexist on ${node.id}`);
    t.is(node.properties.flavor, byName(rawFixtureCatalog().hardwaretypes, "standard-medium").providermap.rackspace.flavor);
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
