/**
 * Scenario tests of the layout solver: the test catalog's templates at many sizes, Coopr's own pinned solver
 * tests (coopr-server SolverTest / ClusterLayoutFinderTest), the false negatives of Coopr's greedy search,
 * pre-check errors and infeasibility explanations. Expected layouts follow the rules in docs/catalog.md, Layout:
 * node layouts in preference order (more services first, then hardware type, image type and service names), and
 * the lexicographically greatest count vector over them that meets every bound.
 */
import test from "ava";
import type { ClusterTemplate, ServiceConstraint, LayoutRequest, LayoutSolution } from "@corral/contracts";
import {
  checkLayout,
  createHostname,
  nodeIdFor,
  solveLayout,
  SOLVER_BUDGET_EXHAUSTED,
} from "@corral/solver";
import { layoutModule } from "@corral/solver/testing";
import { badRequest, reactorCatalog, reactorTemplate, svc } from "./reactor-medium.js";
import { fixtureSolverCatalog, fixtureTemplate, fixtureTemplates } from "../../../test/helpers/fixture-catalog.js";

// ---------------------------------------------------------------------------------------------------------------
// The test catalog (canonical, as product code gets it after validation)

const templates = new Map(fixtureTemplates().map((t) => [t.name, t]));
const catalog = fixtureSolverCatalog();
const template = fixtureTemplate;

function request(t: ClusterTemplate, numMachines: number, extra: Partial<LayoutRequest> = {}): LayoutRequest {
  return {
    template: t,
    provider: { name: t.defaults.provider },
    catalog,
    numMachines,
    clusterId: "00000017",
    clusterName: "my_cluster",
    ...extra,
  };
}

function servicesCount(solution: LayoutSolution): Map<string, number> {
  const counts = new Map<string, number>();
  for (const node of solution.nodes) for (const s of node.services) counts.set(s, (counts.get(s) ?? 0) + 1);
  return counts;
}

const layoutOf = (s: LayoutSolution) => s.layout.map((l) => ({ ...l, services: l.services.join("+") }));

const CONTROL = ["base", "containerd", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"];
const WEB_TIER = ["app-config", "base", "nginx", "node-app"];

// ---------------------------------------------------------------------------------------------------------------
// Every template at sizes 1..200

const SIZE_RANGE = Array.from({ length: 200 }, (_, i) => i + 1);

test("catalog templates - every size from 1 to 200 solves or fails on the size bound, with valid layouts", (t) => {
  t.deepEqual([...templates.keys()].sort(), ["base", "data-platform", "k8s-distributed", "k8s-single", "postgresql-single", "webapp"]);
  for (const [name, tpl] of templates) {
    const min = tpl.constraints?.size?.min ?? 1;
    const max = tpl.constraints?.size?.max ?? Infinity;
    for (const n of SIZE_RANGE) {
      if (n < min || n > max) {
        const err = badRequest(t, () => solveLayout(request(tpl, n)));
        t.is(err.status, 400);
        t.is((err.details as { constraint: string }).constraint, "size", `${name} ${n}`);
        continue;
      }
      const solution = solveLayout(request(tpl, n));
      t.is(solution.nodes.length, n, `${name} ${n}`);
      t.deepEqual(checkLayout(tpl, solution.nodes), [], `${name} ${n}`);
      t.deepEqual(
        solution.nodes.map((node) => node.nodenum),
        Array.from({ length: n }, (_, i) => 1000 + i),
      );
      t.is(new Set(solution.nodes.map((node) => node.properties.hostname)).size, n);
      // Every requested service is on the cluster and defaults are honoured.
      const counts = servicesCount(solution);
      for (const s of tpl.defaults.services) t.true((counts.get(s) ?? 0) > 0, `${name} ${n}: ${s} placed`);
      for (const node of solution.nodes) {
        // data-platform names no type: its per-service constraints choose among the compatible ones
        t.is(node.hardwaretype, tpl.defaults.hardwaretype ?? node.hardwaretype);
        t.is(node.imagetype, tpl.defaults.imagetype ?? node.imagetype);
        if (tpl.compatibility.hardwaretypes.length > 0) t.true(tpl.compatibility.hardwaretypes.includes(node.hardwaretype));
        if (tpl.compatibility.imagetypes.length > 0) t.true(tpl.compatibility.imagetypes.includes(node.imagetype));
        t.is(node.services.includes("base"), true, "base is unconstrained: on every node");
      }
    }
  }
});

// Node layouts of k8s-distributed's defaults, in preference order: the control plane with base and containerd
// (6 services), a worker with coredns (5), a worker (4), coredns alone (3), base and containerd (2); the
// cantcoexist pairs forbid the control plane with a worker or coredns. The greatest count vector takes the
// control plane once (1..1), the worker with coredns twice (coredns 1..2) and workers for the rest.
test("k8s-distributed - one control-plane node, two workers with coredns, the rest plain workers, at every size", (t) => {
  const tpl = template("k8s-distributed");
  for (let n = 3; n <= 200; n++) {
    const solution = solveLayout(request(tpl, n));
    const counts = servicesCount(solution);
    for (const s of ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"]) t.is(counts.get(s), 1);
    for (const s of ["kubelet", "kube-proxy"]) t.is(counts.get(s), n - 1);
    t.is(counts.get("coredns"), 2);
    for (const s of ["base", "containerd"]) t.is(counts.get(s), n);
    t.deepEqual(solution.nodes[0]!.services, CONTROL);
    t.deepEqual(layoutOf(solution), [
      { services: CONTROL.join("+"), hardwaretype: "medium", imagetype: "ubuntu24", count: 1 },
      { services: "base+containerd+coredns+kube-proxy+kubelet", hardwaretype: "medium", imagetype: "ubuntu24", count: 2 },
      ...(n > 3 ? [{ services: "base+containerd+kube-proxy+kubelet", hardwaretype: "medium", imagetype: "ubuntu24", count: n - 3 }] : []),
    ]);
  }
  const three = solveLayout(request(tpl, 3));
  t.is(three.dnsSuffix, "k8s.example.net");
  t.deepEqual(three.nodes[0]!, {
    id: "00000017-1000",
    clusterId: "00000017",
    nodenum: 1000,
    services: CONTROL,
    hardwaretype: "medium",
    imagetype: "ubuntu24",
    properties: {
      // the template's dnsSuffix
      hostname: "my-cluster17-1000.k8s.example.net",
      nodenum: 1000,
      hardwaretype: "medium",
      imagetype: "ubuntu24",
      // medium and ubuntu24 on aws-eu-west-1
      flavor: "t3.medium",
      image: "ami-0a94c8e4ca2674d5a",
      sshuser: "ubuntu",
    },
  });
});

// data-platform's node layouts: zookeeper with spark-master (both allow medium: medium/debian12) and the
// kafka-broker + spark-worker pair (only xlarge and ubuntu24 suit spark-worker) have 4 services each, the
// coordinator first by hardware type name; then spark-master alone, zookeeper alone, base and openjdk. Each set
// takes the alphabetically first hardware and image type all its services allow.
test("data-platform - no template types: the coordinator on medium/debian12, data nodes on xlarge/ubuntu24, up to the size bound 50", (t) => {
  const tpl = template("data-platform");
  t.is(tpl.defaults.hardwaretype, undefined);
  t.is(tpl.defaults.imagetype, undefined);
  for (const n of [3, 4, 25, 50]) {
    const solution = solveLayout(request(tpl, n));
    t.deepEqual(layoutOf(solution), [
      { services: "base+openjdk+spark-master+zookeeper", hardwaretype: "medium", imagetype: "debian12", count: 1 },
      { services: "base+kafka-broker+openjdk+spark-worker", hardwaretype: "xlarge", imagetype: "ubuntu24", count: n - 1 },
    ]);
    // zookeeper may be on 3 nodes, but the greatest vector fills the data nodes first
    const counts = servicesCount(solution);
    t.is(counts.get("zookeeper"), 1);
    t.is(counts.get("kafka-broker"), n - 1);
  }
  const [coordinator, data] = solveLayout(request(tpl, 3)).nodes;
  // gce-europe's entries
  t.like(coordinator!.properties, { flavor: "e2-medium", image: "projects/debian-cloud/global/images/family/debian-12", sshuser: "corral" });
  t.like(data!.properties, { flavor: "n2-standard-8", image: "projects/ubuntu-os-cloud/global/images/family/ubuntu-2404-lts-amd64" });
});

// webapp: the web tier (one mustcoexist set without bounds) is free, so it joins every layout; postgresql
// (max 1) makes the fuller layout, taken once.
test("webapp - postgresql on one node, the web tier on every node", (t) => {
  const tpl = template("webapp");
  for (const n of [1, 2, 7, 200]) {
    const solution = solveLayout(request(tpl, n));
    const counts = servicesCount(solution);
    t.is(counts.get("postgresql"), 1);
    for (const s of WEB_TIER) t.is(counts.get(s), n);
    t.deepEqual(solution.nodes[0]!.services, [...WEB_TIER, "postgresql"]);
    t.deepEqual(solution.nodes[0]!.hardwaretype, "small");
  }
});

test("webapp - requested haproxy and redis (max 1) join the fullest layout, node-exporter everywhere", (t) => {
  const solution = solveLayout(
    request(template("webapp"), 4, { services: ["base", "nginx", "node-app", "app-config", "postgresql", "haproxy", "redis", "node-exporter"] }),
  );
  const counts = servicesCount(solution);
  for (const s of ["haproxy", "redis", "postgresql"]) t.is(counts.get(s), 1);
  t.is(counts.get("node-exporter"), 4);
  t.deepEqual(layoutOf(solution), [
    { services: "app-config+base+haproxy+nginx+node-app+node-exporter+postgresql+redis", hardwaretype: "small", imagetype: "debian12", count: 1 },
    { services: "app-config+base+nginx+node-app+node-exporter", hardwaretype: "small", imagetype: "debian12", count: 3 },
  ]);
});

test("single-node templates - everything on one node", (t) => {
  for (const name of ["k8s-single", "postgresql-single", "base"]) {
    const tpl = template(name);
    const solution = solveLayout(request(tpl, 1));
    t.deepEqual(solution.nodes[0]!.services, [...tpl.defaults.services].sort(), name);
  }
});

test("catalog templates - other providers: usable types follow the providermaps", (t) => {
  const tpl = template("k8s-distributed");
  const gce = solveLayout(request(tpl, 5, { provider: { name: "gce-europe" } }));
  t.like(gce.nodes[0]!.properties, { flavor: "e2-medium", sshuser: "corral" });
  const digitalocean = solveLayout(request(tpl, 5, { provider: { name: "digitalocean" } }));
  t.like(digitalocean.nodes[0]!.properties, { flavor: "s-2vcpu-4gb", image: "ubuntu-24-04-x64", sshuser: "root" });
  // xlarge is not offered on digitalocean
  let err = badRequest(t, () => solveLayout(request(tpl, 5, { provider: { name: "digitalocean" }, hardwaretype: "xlarge" })));
  t.is(err.message, "hardware type xlarge has no entry for provider digitalocean");
  t.is((err.details as { constraint: string }).constraint, "hardwaretype");
  // every image of the catalog is offered everywhere: take digitalocean out of ubuntu24's map
  const imageTypes = catalog.imageTypes.map((i) =>
    i.name === "ubuntu24" ? { ...i, providermap: Object.fromEntries(Object.entries(i.providermap).filter(([p]) => p !== "digitalocean")) } : i,
  );
  const withoutImage = { ...catalog, imageTypes };
  err = badRequest(t, () => solveLayout({ ...request(tpl, 5, { provider: { name: "digitalocean" } }), catalog: withoutImage }));
  t.is(err.message, "image type ubuntu24 has no entry for provider digitalocean");
  t.is((err.details as { constraint: string }).constraint, "imagetype");
  const debian = solveLayout({ ...request(tpl, 5, { provider: { name: "digitalocean" }, imagetype: "debian12" }), catalog: withoutImage });
  t.deepEqual([...new Set(debian.nodes.map((n) => n.properties.image))], ["debian-12-x64"]);
  // Without a template type, a provider lacking a type that some services need leaves them no node.
  err = badRequest(t, () => solveLayout(request(template("data-platform"), 5, { provider: { name: "digitalocean" } })));
  t.is(
    err.message,
    "service kafka-broker must be on at least 2 nodes, but kafka-broker can be on no node: no usable hardware type suits it " +
      "(mustcoexist puts it on the same node as spark-worker); usable hardware types are [large, medium, small], " +
      "kafka-broker allows [large, xlarge], spark-worker allows [xlarge]",
  );
  t.like(err.details, { constraint: "quantities", service: "kafka-broker", min: 2 });
});

test("catalog templates - without a default hardware type the alphabetically first usable one is used", (t) => {
  const tpl = template("k8s-distributed");
  delete tpl.defaults.hardwaretype;
  const solution = solveLayout(request(tpl, 4));
  // Coopr's comparator: plain string order of the usable names (large < medium < xlarge), not the template's order.
  t.deepEqual(tpl.compatibility.hardwaretypes, ["medium", "large", "xlarge"]);
  t.deepEqual([...new Set(solution.nodes.map((n) => n.hardwaretype))], ["large"]);
});

test("catalog templates - size, compatibility, existence, requires and conflicts are checked first", (t) => {
  const tpl = template("k8s-distributed");
  let err = badRequest(t, () => solveLayout(request(tpl, 2)));
  t.is(err.message, "Size must be at least 3. Now it's 2 (template k8s-distributed, constraints.size)");
  err = badRequest(t, () => solveLayout(request(template("data-platform"), 51)));
  t.regex(err.message, /^Size must be at least 3 but not greater than 50\. Now it's 51/);
  err = badRequest(t, () => solveLayout(request(tpl, 0)));
  t.is((err.details as { constraint: string }).constraint, "numMachines");
  err = badRequest(t, () => solveLayout(request(tpl, 5, { hardwaretype: "small" })));
  t.is(err.message, "hardware type small is not compatible with template k8s-distributed");
  err = badRequest(t, () => solveLayout(request(tpl, 5, { hardwaretype: "huge" })));
  t.is(err.message, "hardware type huge does not exist");
  err = badRequest(t, () => solveLayout(request(tpl, 5, { services: ["base", "nginx", "node-app"] })));
  t.is(err.message, "nginx,node-app are incompatible with the cluster (template k8s-distributed)");
  t.deepEqual(err.details, { constraint: "compatibility.services", services: ["nginx", "node-app"] });
  err = badRequest(t, () => solveLayout(request(tpl, 5, { services: ["base", "nope"] })));
  t.is(err.message, "service nope does not exist", "a missing service is not called incompatible");
  const open = template("k8s-distributed");
  open.compatibility.services = [];
  err = badRequest(t, () => solveLayout(request(open, 5, { services: ["base", "nope"] })));
  t.is(err.message, "service nope does not exist");
  // install and runtime requires alike, each service's in request order
  err = badRequest(t, () => solveLayout(request(tpl, 5, { services: ["base", "kube-scheduler", "kubelet"] })));
  t.is(
    err.message,
    [
      "kube-scheduler requires kube-apiserver, which is not on the cluster or in the list of services to add.",
      "kubelet requires containerd, which is not on the cluster or in the list of services to add.",
      "kubelet requires kube-apiserver, which is not on the cluster or in the list of services to add.",
    ].join("\n"),
  );
  t.is((err.details as { constraint: string }).constraint, "requires");
  // provides satisfies requires: node-app needs sql-database, which postgresql and mysql-server provide.
  const webapp = template("webapp");
  const withMysql = solveLayout(request(webapp, 2, { services: ["base", "nginx", "node-app", "app-config", "mysql-server"] }));
  t.is(servicesCount(withMysql).get("mysql-server"), 1);
  err = badRequest(t, () => solveLayout(request(webapp, 2, { services: ["base", "nginx", "node-app", "app-config"] })));
  t.is(err.message, "node-app requires sql-database, which is not on the cluster or in the list of services to add.");
  err = badRequest(t, () =>
    solveLayout(request(webapp, 2, { services: ["base", "nginx", "apache-httpd", "node-app", "app-config", "postgresql"] })),
  );
  t.is(err.message, "nginx conflicts with apache-httpd.\napache-httpd conflicts with nginx.");
  t.is((err.details as { constraint: string }).constraint, "conflicts");
});

// ---------------------------------------------------------------------------------------------------------------
// Coopr's own solver tests, and where Coopr's search fails them

const quantities = (min: number | undefined, max: number | undefined): ServiceConstraint["quantities"] => ({
  ...(min === undefined ? {} : { min }),
  ...(max === undefined ? {} : { max }),
});

/** coopr-server BaseSolverTest: template reactor-medium with its hardware and image types (provider joyent). */
function reactorMedium(n: number): LayoutRequest {
  return {
    template: reactorTemplate(),
    provider: { name: "joyent" },
    catalog: reactorCatalog(),
    numMachines: n,
    clusterId: "123",
    clusterName: "mycluster",
  };
}

const layoutSummary = (s: LayoutSolution) => s.layout.map((l) => `${l.count}x${l.services.join("+")}@${l.hardwaretype}`);

test("coopr SolverTest.testEndToEnd - reactor-medium with 5 machines", (t) => {
  t.deepEqual(layoutSummary(solveLayout(reactorMedium(5))), [
    "3xdatanode+nodemanager+regionserver@large-cpu",
    "1xhbasemaster+namenode+resourcemanager@large-mem",
    "1xreactor+zookeeper@medium",
  ]);
});

test("coopr ClusterLayoutFinderTest.testGetClusterNodes - 10 and 54 machines", (t) => {
  t.deepEqual(layoutSummary(solveLayout(reactorMedium(10))), [
    "8xdatanode+nodemanager+regionserver@large-cpu",
    "1xhbasemaster+namenode+resourcemanager@large-mem",
    "1xreactor+zookeeper@medium",
  ]);
  t.deepEqual(layoutSummary(solveLayout(reactorMedium(54))), [
    "50xdatanode+nodemanager+regionserver@large-cpu",
    "1xhbasemaster+namenode+resourcemanager@large-mem",
    "3xreactor+zookeeper@medium",
  ]);
});

// Coopr's search starts from a greedy fill of the layouts in preference order and reports "no solution" when that
// fill holds fewer machines than asked, as for 57..61 machines here, although other fills hold them.
test("reactor-medium 57-61 machines - Coopr's false negatives are solved", (t) => {
  const expected: Record<number, number[]> = { 56: [50, 1, 5, 0, 0], 57: [50, 1, 4, 1, 1], 58: [50, 1, 3, 2, 2], 61: [50, 1, 0, 5, 5] };
  for (const [n, counts] of Object.entries(expected)) {
    const solution = solveLayout(reactorMedium(Number(n)));
    t.deepEqual(
      solution.layout.map((l) => l.count),
      counts.filter((c) => c > 0),
      `n=${n}`,
    );
    t.deepEqual(checkLayout(reactorMedium(1).template, solution.nodes), []);
  }
  const s61 = solveLayout(reactorMedium(61));
  t.deepEqual(layoutSummary(s61).slice(2), ["5xreactor@medium", "5xzookeeper@medium"]);
});

test("reactor-medium 62 machines - infeasible, naming the capped services", (t) => {
  const err = badRequest(t, () => solveLayout(reactorMedium(62)));
  t.is(err.code, "bad_request");
  t.is(
    err.message,
    "no layout of 62 nodes can have namenode on at most 1 node and datanode on at most 50 nodes and zookeeper on at most 5 nodes " +
      "and reactor on at most 5 nodes (every possible node holds one of namenode, datanode, zookeeper, reactor)",
  );
  t.is((err.details as { constraint: string }).constraint, "quantities");
});

test("coopr SolverTest.testSolveReactor - REACTOR2 with 200 machines", (t) => {
  const services = ["firewall", "hosts", "hadoop-hdfs-datanode", "hadoop-hdfs-namenode", "hadoop-yarn-nodemanager", "hadoop-yarn-resourcemanager", "zookeeper-server", "hbase-master", "hbase-regionserver", "reactor"];
  const reactor2 = (n: number): LayoutRequest => ({
    template: {
      name: "reactor",
      compatibility: { hardwaretypes: ["small", "medium", "large"], imagetypes: ["centos6", "ubuntu12"], services: [...services, "hive-metastore", "mysql-server"] },
      defaults: { services, provider: "rackspace", config: {} },
      constraints: {
        services: {
          "hadoop-hdfs-namenode": { quantities: quantities(1, 1) },
          "hadoop-yarn-resourcemanager": { quantities: quantities(1, 1) },
          "zookeeper-server": { quantities: quantities(1, 1) },
          "hbase-master": { quantities: quantities(undefined, 1) },
          reactor: { quantities: quantities(undefined, 1) },
        },
        layout: {
          mustcoexist: [["hadoop-hdfs-datanode", "hadoop-yarn-nodemanager", "hbase-regionserver"]],
          cantcoexist: [
            ["hadoop-hdfs-namenode", "hadoop-hdfs-secondarynamenode"],
            ["hadoop-yarn-resourcemanager", "hadoop-yarn-nodemanager"],
            ["hadoop-hdfs-namenode", "hadoop-hdfs-datanode"],
            ["hadoop-hdfs-datanode", "mysql-server"],
            ["hbase-master", "hbase-regionserver"],
          ],
        },
      },
    },
    provider: { name: "rackspace" },
    catalog: {
      services: services.map((s) => svc(s)),
      hardwareTypes: ["small", "medium", "large"].map((h, i) => ({ name: h, providermap: { rackspace: { flavor: `flavor${i + 1}` } } })),
      imageTypes: [
        { name: "centos6", providermap: { rackspace: { image: "img1" } } },
        { name: "ubuntu12", providermap: { rackspace: { image: "img2" } } },
      ],
    },
    numMachines: n,
    clusterId: "1",
    clusterName: "name",
  });
  // Coopr's test builds its hardware map without a required type; drop the template default for the same input.
  const solution = solveLayout(reactor2(200));
  const bySet = new Map<string, number>();
  for (const node of solution.nodes) bySet.set(node.services.join("+"), (bySet.get(node.services.join("+")) ?? 0) + 1);
  t.is(bySet.get("firewall+hadoop-hdfs-datanode+hadoop-yarn-nodemanager+hbase-regionserver+hosts"), 198);
  t.is(bySet.get("firewall+hadoop-hdfs-datanode+hadoop-yarn-nodemanager+hbase-regionserver+hosts+reactor+zookeeper-server"), 1);
  t.is(bySet.get("firewall+hadoop-hdfs-namenode+hadoop-yarn-resourcemanager+hbase-master+hosts"), 1);
  // Coopr accepts a one-machine layout without any datanode; requireEveryService refuses that.
  const one = solveLayout(reactor2(1));
  t.deepEqual(one.nodes[0]!.services, ["firewall", "hadoop-hdfs-namenode", "hadoop-yarn-resourcemanager", "hbase-master", "hosts", "reactor", "zookeeper-server"]);
  const err = badRequest(t, () => solveLayout(reactor2(1), { requireEveryService: true }));
  t.is(
    err.message,
    "no layout of 1 node can have hbase-master on at least 1 node and hbase-regionserver on at least 1 node " +
      "(hbase-master and hbase-regionserver never share a node)",
  );
  t.is(solveLayout(reactor2(2), { requireEveryService: true }).nodes.length, 2);
});

test("coopr SolverTest.testRequiredTypes - a required hardware or image type applies to every node", (t) => {
  const base = reactorMedium(5);
  const simple: LayoutRequest = {
    ...base,
    template: {
      name: "simple",
      compatibility: { hardwaretypes: ["small", "medium", "large-mem"], imagetypes: ["centos6", "ubuntu12"], services: ["namenode", "datanode"] },
      defaults: { services: ["namenode", "datanode"], provider: "joyent", config: {}, hardwaretype: "medium", imagetype: "ubuntu12" },
    },
    clusterName: "abc",
  };
  const hw = (s: LayoutSolution) => [...new Set(s.nodes.map((n) => n.hardwaretype))];
  t.deepEqual(hw(solveLayout({ ...simple, hardwaretype: "medium" })), ["medium"]);
  t.deepEqual(hw(solveLayout({ ...simple, hardwaretype: "large-mem" })), ["large-mem"]);
  const both = solveLayout({ ...simple, hardwaretype: "small", imagetype: "centos6" });
  t.deepEqual(hw(both), ["small"]);
  t.deepEqual([...new Set(both.nodes.map((n) => n.properties.image))], ["joyent-hash-of-centos6.4"]);
  t.is(both.nodes.length, 5);
});

// ---------------------------------------------------------------------------------------------------------------
// Infeasible requests say why

test("infeasible - a required service whose hardware is filtered out names the service and the types", (t) => {
  const tpl = template("k8s-distributed");
  tpl.constraints!.services!["kube-scheduler"]!.hardwaretypes = ["small", "xlarge"];
  const err = badRequest(t, () => solveLayout(request(tpl, 60)));
  // etcd comes first among the requested services with a minimum; it shares kube-scheduler's node
  t.is(
    err.message,
    "service etcd must be on at least 1 node, but etcd can be on no node: no usable hardware type suits it " +
      "(mustcoexist puts it on the same node as kube-apiserver, kube-controller-manager, kube-scheduler); " +
      "usable hardware types are [medium], etcd allows [medium, large, xlarge], kube-scheduler allows [small, xlarge]",
  );
  t.like(err.details, { constraint: "quantities", service: "etcd", min: 1 });
  // Without the template default every compatible type is usable: the control plane gets the one type etcd and
  // kube-scheduler both allow, the workers the alphabetically first.
  delete tpl.defaults.hardwaretype;
  const solution = solveLayout(request(tpl, 60));
  t.is(solution.nodes[0]!.hardwaretype, "xlarge");
  t.is(solution.nodes[1]!.hardwaretype, "large");
});

test("infeasible - mustcoexist against cantcoexist, and max 0", (t) => {
  const tpl = template("k8s-distributed");
  tpl.constraints!.layout!.cantcoexist!.push(["kube-scheduler", "etcd"]);
  let err = badRequest(t, () => solveLayout(request(tpl, 5)));
  t.is(
    err.message,
    "service etcd must be on at least 1 node, but etcd can be on no node: cantcoexist [kube-scheduler, etcd] forbids its node " +
      "(mustcoexist puts it on the same node as kube-apiserver, kube-controller-manager, kube-scheduler)",
  );
  const tpl2 = template("k8s-distributed");
  tpl2.constraints!.services!["kube-scheduler"] = { quantities: { min: 1, max: 0 } };
  err = badRequest(t, () => solveLayout(request(tpl2, 5)));
  t.is(err.message, "service kube-scheduler must be on at least 1 node but its quantities max is 0");
  const tpl3 = template("k8s-distributed");
  tpl3.constraints!.services!["kubelet"] = { quantities: { min: 9 } };
  err = badRequest(t, () => solveLayout(request(tpl3, 5)));
  t.is(err.message, "service kubelet must be on at least 9 nodes but the cluster has 5");
});

test("infeasible - two large minimums that never share a node", (t) => {
  const tpl = template("webapp");
  tpl.constraints!.layout!.cantcoexist = [["haproxy", "redis"]];
  tpl.constraints!.services!["haproxy"] = { quantities: { min: 50 } };
  tpl.constraints!.services!["redis"] = { quantities: { min: 50 } };
  const services = ["base", "nginx", "node-app", "app-config", "postgresql", "haproxy", "redis"];
  const err = badRequest(t, () => solveLayout(request(tpl, 90, { services })));
  t.is(
    err.message,
    "no layout of 90 nodes can have haproxy on at least 50 nodes and redis on at least 50 nodes (haproxy and redis never share a node)",
  );
  t.like(err.details, { constraint: "quantities", numMachines: 90, conflicting: [{ service: "haproxy", min: 50 }, { service: "redis", min: 50 }] });
  const counts = servicesCount(solveLayout(request(tpl, 100, { services })));
  t.is(counts.get("haproxy"), 50);
  t.is(counts.get("redis"), 50);
});

test("budget - a tiny step budget or an expired clock fails with solver_budget_exhausted", (t) => {
  let err = badRequest(t, () => solveLayout(reactorMedium(20), { maxSteps: 5 }));
  t.is(err.code, SOLVER_BUDGET_EXHAUSTED);
  t.is(err.status, 400);
  t.like(err.details, { constraint: "budget", maxSteps: 5 });
  let calls = 0;
  const clock = () => (calls++ === 0 ? 0 : 1000); // the deadline has passed at the first check
  err = badRequest(t, () => solveLayout(reactorMedium(62), { timeLimitMs: 50, clock }));
  t.is(err.code, SOLVER_BUDGET_EXHAUSTED);
  t.throws(() => solveLayout(reactorMedium(5), { timeLimitMs: 5 }), { instanceOf: TypeError });
  t.is(solveLayout(reactorMedium(20), { timeLimitMs: 1e9, clock: () => 0 }).nodes.length, 20);
});

// ---------------------------------------------------------------------------------------------------------------
// Names

test("hostnames - Coopr's NodeServiceTest examples", (t) => {
  t.is(createHostname("123i.am-a_clusTer", "00000001", 1002, undefined), "i-am-a-cluster1-1002.local");
  t.is(createHostname(`${"a".repeat(55)}bcde`, "00000123", 1002, "dev.company.com"), `${"a".repeat(55)}123-1002.dev.company.com`);
  t.is(createHostname("hdp", "1", 1000, ".example.com"), "hdp1-1000.example.com");
  t.is(createHostname("Web", "c-7F", 1000, ""), "webc-7f-1000.local");
  t.is(nodeIdFor("00000017", 1003), "00000017-1003");
  const solution = solveLayout({ ...request(template("webapp"), 2, { dnsSuffix: ".corp.net" }), clusterName: "123i.am-a_clusTer", clusterId: "00000001" });
  t.deepEqual(
    solution.nodes.map((n) => n.properties.hostname),
    ["i-am-a-cluster1-1000.corp.net", "i-am-a-cluster1-1001.corp.net"],
  );
  t.is(solution.dnsSuffix, "corp.net");
});

test("public API - index exports exactly the documented names", (t) => {
  t.deepEqual(Object.keys(layoutModule).sort(), [
    "DEFAULT_MAX_STEPS",
    "FIRST_NODENUM",
    "SOLVER_BUDGET_EXHAUSTED",
    "addServices",
    "checkLayout",
    "checkShrink",
    "createHostname",
    "growCluster",
    "nextNodenum",
    "nodeIdFor",
    "replacementNode",
    "shrinkRefusal",
    "solveLayout",
  ]);
});
