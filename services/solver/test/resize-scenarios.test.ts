/**
 * Growing, shrinking and replacing nodes of clusters of the test catalog's templates (docs/catalog.md, Growing and
 * shrinking): the new nodes the solver chooses, the checks of requested services and types, every refusal with
 * the constraint it names, and the replacement node.
 */
import test from "ava";
import type { ClusterTemplate, ExistingNode, SolvedNode } from "@corral/contracts";
import {
  addServices,
  checkLayout,
  checkShrink,
  growCluster,
  nextNodenum,
  replacementNode,
  shrinkRefusal,
  solveLayout,
  type GrowRequest,
} from "@corral/solver";
import { badRequest, svc } from "./reactor-medium.js";
import { fixtureSolverCatalog, fixtureTemplate, fixtureTemplates } from "../../../test/helpers/fixture-catalog.js";

const catalog = fixtureSolverCatalog();
const CLUSTER = { clusterId: "00000017", clusterName: "my_cluster" };

function create(t: ClusterTemplate, numMachines: number, services = catalog.services): SolvedNode[] {
  return solveLayout({ template: t, provider: { name: t.defaults.provider }, catalog: { ...catalog, services }, numMachines, ...CLUSTER }).nodes;
}

function growRequest(t: ClusterTemplate, nodes: readonly ExistingNode[], numMachines: number, extra: Partial<GrowRequest> = {}): GrowRequest {
  return { template: t, provider: { name: t.defaults.provider }, catalog, nodes, numMachines, ...CLUSTER, ...extra };
}

const layoutOf = (nodes: readonly SolvedNode[]) => nodes.map((n) => `${n.nodenum} ${n.hardwaretype}/${n.imagetype} ${n.services.join("+")}`);
const layoutKey = (n: ExistingNode) => `${n.hardwaretype}/${n.imagetype} ${[...n.services].sort().join("+")}`;
const shrink = (t: ClusterTemplate, nodes: readonly ExistingNode[], remove: string[]) =>
  checkShrink({ template: t, catalog: { services: catalog.services }, nodes, remove });

const WEB_TIER = "app-config+base+nginx+node-app";
const WORKER = "base+containerd+kube-proxy+kubelet";

// ---------------------------------------------------------------------------------------------------------------
// Growing: the solver's choice

test("grow - webapp from 3 to 5 adds two web-tier nodes: postgresql is at its max", (t) => {
  const webapp = fixtureTemplate("webapp");
  const nodes = create(webapp, 3);
  const grown = growCluster(growRequest(webapp, nodes, 2));
  t.deepEqual(layoutOf(grown.nodes), [`1003 small/debian12 ${WEB_TIER}`, `1004 small/debian12 ${WEB_TIER}`]);
  t.deepEqual(grown.nodes.map((n) => n.id), ["00000017-1003", "00000017-1004"]);
  t.deepEqual(grown.nodes.map((n) => n.properties.hostname), ["my-cluster17-1003.local", "my-cluster17-1004.local"]);
  t.like(grown.nodes[0]!.properties, { nodenum: 1003, hardwaretype: "small", imagetype: "debian12", flavor: "t3.small" });
  t.deepEqual(grown.layout, [{ services: WEB_TIER.split("+"), hardwaretype: "small", imagetype: "debian12", count: 2 }]);
  t.deepEqual(checkLayout(webapp, [...nodes, ...grown.nodes]), []);
});

test("grow - k8s-distributed from 5 to 7 adds two workers without coredns (at its max of 2)", (t) => {
  const k8s = fixtureTemplate("k8s-distributed");
  const grown = growCluster(growRequest(k8s, create(k8s, 5), 2));
  t.deepEqual(layoutOf(grown.nodes), [`1005 medium/ubuntu24 ${WORKER}`, `1006 medium/ubuntu24 ${WORKER}`]);
});

test("grow - data-platform adds data nodes on their own types (xlarge/ubuntu24)", (t) => {
  const data = fixtureTemplate("data-platform");
  const grown = growCluster(growRequest(data, create(data, 3), 2));
  t.deepEqual(layoutOf(grown.nodes), [
    "1003 xlarge/ubuntu24 base+kafka-broker+openjdk+spark-worker",
    "1004 xlarge/ubuntu24 base+kafka-broker+openjdk+spark-worker",
  ]);
});

test("grow - every catalog template: growing a create of n by k gives the create of n + k minus the cluster", (t) => {
  let compared = 0;
  for (const template of fixtureTemplates()) {
    const min = template.constraints?.size?.min ?? 1;
    const max = Math.min(template.constraints?.size?.max ?? 40, 40);
    for (let n = min; n < max; n++) {
      const nodes = create(template, n);
      for (let k = 1; n + k <= max && k <= 6; k++) {
        const larger = create(template, n + k).map(layoutKey);
        for (const key of nodes.map(layoutKey)) larger.splice(larger.indexOf(key), 1);
        const grown = growCluster(growRequest(template, nodes, k));
        t.deepEqual(grown.nodes.map(layoutKey), larger, `${template.name} ${n} + ${k}`);
        t.deepEqual(checkLayout(template, [...nodes, ...grown.nodes]), []);
        compared++;
      }
    }
  }
  t.true(compared > 300);
});

test("grow - a service added to the cluster is counted: redis (at most 1) stays off the new nodes", (t) => {
  const webapp = fixtureTemplate("webapp");
  const nodes = create(webapp, 2);
  const added = addServices({ template: webapp, catalog: { services: catalog.services }, nodes, services: ["redis"] });
  const withRedis = nodes.map((n) => ({ ...n, services: added.changedNodes.find((c) => c.id === n.id)?.services ?? n.services }));
  const grown = growCluster(growRequest(webapp, withRedis, 2, { clusterServices: added.services }));
  t.deepEqual(layoutOf(grown.nodes), [`1002 small/debian12 ${WEB_TIER}`, `1003 small/debian12 ${WEB_TIER}`]);
});

test("grow - a hardware type for the new nodes: the workers go on large", (t) => {
  const k8s = fixtureTemplate("k8s-distributed");
  const grown = growCluster(growRequest(k8s, create(k8s, 3), 1, { hardwaretype: "large", imagetype: "debian12" }));
  t.deepEqual(layoutOf(grown.nodes), [`1003 large/debian12 ${WORKER}`]);
});

test("grow - nodenums follow the highest, or start where the caller says", (t) => {
  const base = fixtureTemplate("base");
  const nodes = create(base, 3).filter((n) => n.nodenum !== 1001);
  t.is(nextNodenum(nodes), 1003);
  t.is(nextNodenum([]), 1000);
  t.deepEqual(growCluster(growRequest(base, nodes, 1)).nodes.map((n) => n.id), ["00000017-1003"]);
  t.deepEqual(growCluster(growRequest(base, nodes, 2, { firstNodenum: 1010 })).nodes.map((n) => n.id), ["00000017-1010", "00000017-1011"]);
  const err = badRequest(t, () => growCluster(growRequest(base, nodes, 1, { firstNodenum: 1002 })));
  t.is(err.message, "firstNodenum must be an integer of at least 1003 (above every node's), got 1002");
  t.is(err.details?.["constraint"], "firstNodenum");
});

// ---------------------------------------------------------------------------------------------------------------
// Growing: requested services

test("grow with services - a worker without coredns, exactly the services named", (t) => {
  const k8s = fixtureTemplate("k8s-distributed");
  const grown = growCluster(growRequest(k8s, create(k8s, 3), 2, { services: ["kubelet", "kube-proxy", "kubelet"] }));
  t.deepEqual(layoutOf(grown.nodes), ["1003 medium/ubuntu24 kube-proxy+kubelet", "1004 medium/ubuntu24 kube-proxy+kubelet"]);
});

test("grow with services - without a pinned type, the first type every named service allows", (t) => {
  const data = fixtureTemplate("data-platform");
  const grown = growCluster(growRequest(data, create(data, 3), 1, { services: ["base", "openjdk", "zookeeper"] }));
  t.deepEqual(layoutOf(grown.nodes), ["1003 medium/debian12 base+openjdk+zookeeper"]);
});

test("grow with services - each refusal names its constraint", (t) => {
  const k8s = fixtureTemplate("k8s-distributed");
  const nodes = create(k8s, 5);
  const refusal = (extra: Partial<GrowRequest>, k = 1) => {
    const err = badRequest(t, () => growCluster(growRequest(k8s, nodes, k, extra)));
    return { constraint: err.details?.["constraint"], message: err.message };
  };
  t.deepEqual(refusal({ services: ["redis"] }), {
    constraint: "services",
    message: "redis is not on the cluster: new nodes take services the cluster has",
  });
  t.deepEqual(refusal({ services: ["kubelet"] }), {
    constraint: "mustcoexist",
    message: "new nodes cannot hold [kubelet]: a node with kubelet must hold kube-proxy too (mustcoexist [kubelet, kube-proxy, ingress-nginx])",
  });
  t.deepEqual(refusal({ services: ["etcd", "kube-proxy", "kubelet"] }), {
    constraint: "cantcoexist",
    message: "new nodes cannot hold [etcd, kube-proxy, kubelet]: a node may not hold all of cantcoexist [etcd, kubelet]",
  });
  t.deepEqual(refusal({ services: ["base", "coredns"] }), {
    constraint: "quantities",
    message: "service coredns is on 2 nodes and may be on at most 2 nodes: 1 node more with it would be too many",
  });
  const data = fixtureTemplate("data-platform");
  const types = badRequest(t, () =>
    growCluster(growRequest(data, create(data, 3), 1, { services: ["kafka-broker", "spark-worker"], hardwaretype: "large" })),
  );
  t.is(
    types.message,
    "no usable hardware type suits new nodes with [kafka-broker, spark-worker]: the hardware type is [large], " +
      "kafka-broker allows [large, xlarge], spark-worker allows [xlarge]",
  );
  t.is(types.details?.["constraint"], "hardwaretypes");
});

// ---------------------------------------------------------------------------------------------------------------
// Growing: refusals

test("grow - size, types and machine count are checked first, in the create's words", (t) => {
  const single = fixtureTemplate("k8s-single");
  const err = badRequest(t, () => growCluster(growRequest(single, create(single, 1), 1)));
  t.is(err.message, "Size must be at least 1 but not greater than 1. Adding 1 node to 1 makes 2 (template k8s-single, constraints.size)");
  t.like(err.details, { constraint: "size", min: 1, max: 1, nodes: 1, numMachines: 1 });

  const data = fixtureTemplate("data-platform");
  const big = badRequest(t, () => growCluster(growRequest(data, create(data, 48), 3)));
  t.is(big.message, "Size must be at least 3 but not greater than 50. Adding 3 nodes to 48 makes 51 (template data-platform, constraints.size)");

  const webapp = fixtureTemplate("webapp");
  const nodes = create(webapp, 2);
  t.is(badRequest(t, () => growCluster(growRequest(webapp, nodes, 0))).message, "numMachines must be a positive integer, got 0");
  t.is(badRequest(t, () => growCluster(growRequest(webapp, nodes, 1, { hardwaretype: "xlarge" }))).message, "hardware type xlarge is not compatible with template webapp");
  t.is(badRequest(t, () => growCluster(growRequest(webapp, nodes, 1, { imagetype: "centos7" }))).message, "image type centos7 does not exist");
});

test("grow - a cluster whose layout already breaks its template is refused", (t) => {
  const webapp = fixtureTemplate("webapp");
  const nodes = create(webapp, 2).map((n) => ({ ...n, services: [...n.services, "postgresql"] }));
  const err = badRequest(t, () => growCluster(growRequest(webapp, nodes, 1)));
  t.is(err.message, "the cluster's current layout already breaks its template: postgresql is on 2 nodes, but must be on at most 1");
  t.is(err.details?.["constraint"], "quantities");
});

test("grow - every possible new node holds a service at its max: refused, naming the bounds", (t) => {
  const template: ClusterTemplate = {
    name: "pair",
    compatibility: { hardwaretypes: [], imagetypes: [], services: [] },
    defaults: { services: ["etcd", "kubelet"], provider: "aws-eu-west-1", config: {}, hardwaretype: "medium", imagetype: "debian12" },
    constraints: { layout: { cantcoexist: [["etcd", "kubelet"]] }, services: { etcd: { quantities: { max: 1 } }, kubelet: { quantities: { max: 2 } } } },
  };
  const nodes = create(template, 3, [svc("etcd"), svc("kubelet")]);
  t.deepEqual(layoutOf(nodes), ["1000 medium/debian12 etcd", "1001 medium/debian12 kubelet", "1002 medium/debian12 kubelet"]);
  const err = badRequest(t, () => growCluster(growRequest(template, nodes, 1)));
  t.is(
    err.message,
    "cannot add 1 node: the new nodes would need etcd on at most 0 nodes and kubelet on at most 0 nodes (every possible node " +
      "holds one of etcd, kubelet; etcd is on 1 node and must be on at most 1 node in all; kubelet is on 2 nodes and must be on at most 2 nodes in all)",
  );
  t.like(err.details, { constraint: "quantities", numMachines: 1, conflicting: [{ service: "etcd", on: 1, max: 0 }, { service: "kubelet", on: 2, max: 0 }] });
});

test("grow - a service on no node that shares a mustcoexist set with one on a node never goes on new nodes", (t) => {
  const template: ClusterTemplate = {
    name: "split",
    compatibility: { hardwaretypes: [], imagetypes: [], services: [] },
    defaults: { services: ["base", "etcd", "coredns"], provider: "aws-eu-west-1", config: {}, hardwaretype: "medium", imagetype: "debian12" },
    constraints: { layout: { mustcoexist: [["etcd", "coredns"]] } },
  };
  // etcd without coredns on a node: only possible while coredns is on no node.
  const nodes: ExistingNode[] = [{ id: "n1", nodenum: 1000, services: ["base", "etcd"], hardwaretype: "medium", imagetype: "debian12" }];
  t.deepEqual(checkLayout(template, nodes), []);
  const grown = growCluster(growRequest(template, nodes, 1, { clusterServices: ["base", "etcd", "coredns"] }));
  t.deepEqual(layoutOf(grown.nodes), ["1001 medium/debian12 base+etcd"]);
  const err = badRequest(t, () =>
    growCluster(growRequest(template, nodes, 1, { clusterServices: ["base", "etcd", "coredns"], services: ["coredns", "etcd"] })),
  );
  t.is(err.message, "coredns may not go on new nodes: it is on no node yet, and the nodes with the other services of mustcoexist [etcd, coredns] lack it");
  t.is(err.details?.["constraint"], "mustcoexist");
});

// ---------------------------------------------------------------------------------------------------------------
// Shrinking

test("shrink - k8s-distributed: the control plane, coredns, kubelet and the size each refuse a removal", (t) => {
  const k8s = fixtureTemplate("k8s-distributed");
  const nodes = create(k8s, 5); // 1000 control plane, 1001-1002 workers with coredns, 1003-1004 workers
  const control = shrink(k8s, nodes, ["00000017-1000"]);
  t.false(control.ok);
  if (control.ok) return;
  t.deepEqual(control.violations.map((v) => `${v.constraint} ${v.service} ${v.requires ?? ""}`.trim()), [
    "quantities etcd",
    "quantities kube-apiserver",
    "quantities kube-controller-manager",
    "quantities kube-scheduler",
    "requires coredns kube-apiserver",
    "requires kubelet kube-apiserver",
  ]);
  t.is(control.violations[0]!.message, "service etcd must be on at least 1 node; removing node 00000017-1000 leaves it on 0");

  const coredns = shrink(k8s, nodes, ["00000017-1001", "00000017-1002"]);
  t.deepEqual(coredns.ok ? [] : coredns.violations.map((v) => v.message), [
    "service coredns must be on at least 1 node; removing nodes 00000017-1001, 00000017-1002 leaves it on 0",
  ]);

  const workers = shrink(k8s, nodes, ["00000017-1002", "00000017-1003", "00000017-1004"]);
  t.deepEqual(workers.ok ? [] : workers.violations.map((v) => v.message), [
    "Size must be at least 3. Removing 3 nodes from 5 leaves 2 (template k8s-distributed, constraints.size)",
    "service kubelet must be on at least 2 nodes; removing nodes 00000017-1002, 00000017-1003, 00000017-1004 leaves it on 1",
  ]);

  const one = shrink(k8s, nodes, ["00000017-1004"]);
  t.true(one.ok);
  if (one.ok) {
    t.deepEqual(one.remaining.map((n) => n.id), ["00000017-1000", "00000017-1001", "00000017-1002", "00000017-1003"]);
    t.deepEqual(one.leavingServices, []);
  }
});

test("shrink - a removal that takes away what a remaining service requires is refused", (t) => {
  const webapp = fixtureTemplate("webapp");
  const nodes = create(webapp, 3); // 1000 holds postgresql, which provides sql-database for node-app
  const check = shrink(webapp, nodes, ["00000017-1000"]);
  t.deepEqual(check.ok ? [] : check.violations, [
    {
      constraint: "requires",
      service: "node-app",
      requires: "sql-database",
      message: "node-app requires sql-database, which removing node 00000017-1000 takes off the cluster",
    },
  ]);
  const refusal = shrinkRefusal(check.ok ? [] : check.violations);
  t.is(refusal.status, 409);
  t.is(refusal.details?.["constraint"], "requires");
  t.true(shrink(webapp, nodes, ["00000017-1002"]).ok);
});

test("shrink - services that leave with their last node are listed", (t) => {
  const webapp = fixtureTemplate("webapp");
  const nodes = create(webapp, 3).map((n) => (n.nodenum === 1002 ? { ...n, services: [...n.services, "redis"] } : n));
  t.deepEqual(checkLayout(webapp, nodes), []);
  const check = shrink(webapp, nodes, ["00000017-1002"]);
  t.deepEqual(check.ok ? check.leavingServices : check.violations, ["redis"]);
  const kept = shrink(webapp, nodes, ["00000017-1001"]);
  t.deepEqual(kept.ok ? kept.leavingServices : kept.violations, []);
});

test("shrink - an unknown node is a 404 and an empty list a 400", (t) => {
  const base = fixtureTemplate("base");
  const nodes = create(base, 2);
  const missing = badRequest(t, () => shrink(base, nodes, ["00000017-1009"]));
  t.is(missing.status, 404);
  t.is(missing.message, "node 00000017-1009 not found");
  t.is(badRequest(t, () => shrink(base, nodes, [])).details?.["constraint"], "nodes");
});

test("grow then shrink back - k8s-distributed from 4 to 10 and back to 4", (t) => {
  const k8s = fixtureTemplate("k8s-distributed");
  const nodes = create(k8s, 4);
  const grown = growCluster(growRequest(k8s, nodes, 6));
  const all = [...nodes, ...grown.nodes];
  t.deepEqual(checkLayout(k8s, all), []);
  const back = shrink(k8s, all, grown.nodes.map((n) => n.id));
  t.true(back.ok);
  if (back.ok) t.deepEqual(back.remaining, nodes);
});

// ---------------------------------------------------------------------------------------------------------------
// Replacing

test("replace - the same services and types under a new nodenum", (t) => {
  const k8s = fixtureTemplate("k8s-distributed");
  const nodes = create(k8s, 4);
  const old = nodes[1]!;
  const node = replacementNode({
    template: k8s,
    provider: { name: k8s.defaults.provider },
    catalog,
    node: old,
    nodenum: nextNodenum(nodes),
    ...CLUSTER,
    dnsSuffix: "k8s.example.net",
  });
  t.deepEqual(node, {
    ...old,
    id: "00000017-1004",
    nodenum: 1004,
    properties: { ...old.properties, nodenum: 1004, hostname: "my-cluster17-1004.k8s.example.net" },
  });
  const without = { ...catalog, hardwareTypes: catalog.hardwareTypes.filter((h) => h.name !== "medium") };
  const err = badRequest(t, () =>
    replacementNode({ template: k8s, provider: { name: k8s.defaults.provider }, catalog: without, node: old, nodenum: 1004, ...CLUSTER }),
  );
  t.is(err.message, "hardware type medium does not exist");
  t.is(err.details?.["constraint"], "hardwaretype");
});
