import test from "ava";
import fc from "fast-check";
import { type Json, isCorralError, type MacroNode } from "@corral/contracts";
import {
  compileConfig,
  createMacroContext,
  expandConfig,
  expandString,
  validateMacros,
} from "@corral/solver";
import { macrosModule } from "@corral/solver/testing";
import { fixtureTemplate, fixtureTemplates } from "../../../test/helpers/fixture-catalog.js";

const template = fixtureTemplate;

const node = (id: string, nodenum: number, services: string[], extra: Partial<MacroNode["properties"]> = {}): MacroNode => ({
  id,
  nodenum,
  services,
  properties: {
    hostname: `${id}.example.com`,
    ipaddresses: { bind_v4: `10.0.0.${nodenum - 1000}`, access_v4: `203.0.113.${nodenum - 1000}` },
    ...extra,
  },
});

// Given out of nodenum order on purpose: lists follow nodenum, not input order.
const nodes: MacroNode[] = [
  node("zk3", 1003, ["base", "zookeeper"]),
  node("zk1", 1001, ["base", "zookeeper", "spark-master"]),
  node("zk2", 1002, ["base", "zookeeper"]),
  node("db", 1004, ["base", "postgresql"]),
];
const ctx = createMacroContext({ nodes, owner: "alice" });
const x = (text: string, nodeId = "zk2"): string => expandString(text, ctx, nodeId);

const rejects = (t: import("ava").ExecutionContext, fn: () => unknown, code: string, message: string): void => {
  const err = t.throws(fn);
  t.true(isCorralError(err) && err.status === 400, String(err));
  t.like(err, { code, message });
};

test("macros - exports exactly the documented API", (t) => {
  t.deepEqual(Object.keys(macrosModule).sort(), [
    "DEFAULT_IP_TYPE",
    "compileConfig",
    "createMacroContext",
    "expandConfig",
    "expandString",
    "validateMacros",
  ]);
});

// ---- every macro form ----

test("macros - host.service lists hostnames in nodenum order", (t) => {
  t.is(x("%host.service.zookeeper%"), "zk1.example.com,zk2.example.com,zk3.example.com");
  t.is(x("spark://%host.service.spark-master%:7077/x"), "spark://zk1.example.com:7077/x");
});

test("macros - ip.service uses bind_v4 by default; typed forms pick the ip type", (t) => {
  t.is(x("%ip.service.zookeeper%"), "10.0.0.1,10.0.0.2,10.0.0.3");
  t.is(x("%ip.bind_v4.service.postgresql%"), "10.0.0.4");
  t.is(x("%ip.access_v4.service.zookeeper%"), "203.0.113.1,203.0.113.2,203.0.113.3");
});

test("macros - self forms: host.self, ip.self, ip.<type>.self", (t) => {
  t.is(x("%host.self%"), "zk2.example.com");
  t.is(x("%ip.self%"), "10.0.0.2");
  t.is(x("%ip.bind_v4.self%"), "10.0.0.2");
  t.is(x("%ip.access_v4.self%", "db"), "203.0.113.4");
});

test("macros - indexed forms pick the i-th node (0-based, by nodenum)", (t) => {
  t.is(x("%host.service.zookeeper[0]%"), "zk1.example.com");
  t.is(x("%host.service.zookeeper[2]%"), "zk3.example.com");
  t.is(x("%ip.service.zookeeper[1]%"), "10.0.0.2");
  t.is(x("%ip.access_v4.service.zookeeper[1]%"), "203.0.113.2");
  t.is(x("%join(map(host.service.zookeeper[1],'$:2181'),';')%"), "zk2.example.com:2181");
});

test("macros - num.service counts nodes, 0 when absent", (t) => {
  t.is(x("%num.service.zookeeper%"), "3");
  t.is(x("%num.service.nothing-here%"), "0");
  t.is(x("%join(num.service.base,'-')%"), "4");
});

test("macros - instance.self.service is the 1-based rank of this node; absent when the node lacks the service", (t) => {
  t.deepEqual(["zk1", "zk2", "zk3"].map((n) => x("%instance.self.service.zookeeper%", n)), ["1", "2", "3"]);
  t.is(x("id=%instance.self.service.zookeeper%", "db"), "id=%instance.self.service.zookeeper%");
});

test("macros - an instance number on a macro that takes none is ignored, as Coopr did", (t) => {
  t.is(x("%cluster.owner[0]%"), x("%cluster.owner%"));
  t.is(x("%host.self[5]%"), x("%host.self%"));
  t.is(x("%num.service.zookeeper[5]%"), "3");
  t.is(x("%instance.self.service.zookeeper[2]%", "zk1"), "1");
  t.notThrows(() => validateMacros({ a: "%cluster.owner[0]%", b: "%ip.self[1]%" }));
});

test("macros - cluster.owner", (t) => {
  t.is(x("%cluster.owner%"), "alice");
  const noOwner = createMacroContext({ nodes });
  t.is(expandString("%cluster.owner%", noOwner, "zk1"), "%cluster.owner%");
});

test("macros - join and map", (t) => {
  t.is(x("%join(map(host.service.zookeeper,'$:2181'),',')%"), "zk1.example.com:2181,zk2.example.com:2181,zk3.example.com:2181");
  t.is(x("%join(host.service.zookeeper,' ')%"), "zk1.example.com zk2.example.com zk3.example.com");
  t.is(x("%map(ip.service.zookeeper,\"$:2888:3888\")%"), "10.0.0.1:2888:3888,10.0.0.2:2888:3888,10.0.0.3:2888:3888");
  t.is(x("%map(num.service.base,'$$$')%"), "$4"); // $$ is a literal $
  t.is(x("%join(map(host.service.schema-registry,'http://$:8081'),',')%"), "%join(map(host.service.schema-registry,'http://$:8081'),',')%");
});

test("macros - a macro without value stays as is unless another macro in the string has one", (t) => {
  t.is(x("%host.service.none%"), "%host.service.none%");
  t.is(x("a %host.service.none% b %ip.service.none% c"), "a %host.service.none% b %ip.service.none% c");
  t.is(x("a %host.service.none% b %host.service.postgresql% c"), "a  b db.example.com c");
  t.is(x("%host.self%", "zk1"), "zk1.example.com");
});

test("macros - %% is copied verbatim, a lone % is text", (t) => {
  t.is(x("100%% sure"), "100%% sure");
  t.is(x("100% of it"), "100% of it");
  t.is(x("%%host.self%%"), "%%host.self%%");
  t.is(x("x%%y %num.service.base%"), "x%%y 4");
});

test("macros - service names may contain dots; ip.<type> splits on the first two dots", (t) => {
  const dotted = createMacroContext({ nodes: [node("a", 1001, ["svc.v2"])] });
  t.is(expandString("%host.service.svc.v2%", dotted, "a"), "a.example.com");
  t.is(expandString("%ip.access_v4.service.svc.v2%", dotted, "a"), "203.0.113.1");
  t.is(expandString("%num.service.svc.v2%", dotted, "a"), "1");
  // ip.self.service.X parses as ip type "self" (no such address here)
  t.is(expandString("%ip.self.service.none%", dotted, "a"), "%ip.self.service.none%");
});

test("macros - a single ipaddress property serves bind_v4 when ipaddresses lacks it", (t) => {
  const c = createMacroContext({ nodes: [{ id: "a", nodenum: 1, services: ["s"], properties: { hostname: "a", ipaddress: "192.0.2.7" } }] });
  t.is(expandString("%ip.service.s% %ip.self%", c, "a"), "192.0.2.7 192.0.2.7");
  rejects(t, () => expandString("%ip.access_v4.self%", c, "a"), "macro_incomplete_cluster", "node a has no ip for macro expansion.");
});

// ---- errors ----

test("macros - malformed macros are syntax errors with Coopr's messages", (t) => {
  const cases: [string, string][] = [
    ["50% and 60%", "A macro name must not be empty."],
    ["50% of %host.service.postgresql%", "A macro name must not be empty."],
    ["%a%%b%", "Extra characters after macro at position 1"],
    ["%join(map(host.service.zk, '$:2181'), ',')%", "Expected ' or \" at position 25"],
    ["%join(host.service.zk,',')x%", "Extra characters after macro at position 25"],
    ["%join(host.service.zk;',')%", "',' expected at position 20"],
    ["%join(host.service.zk,',' %", "')' expected at position 24"],
    ["%map(host.service.zk,'$)%", "Expected ' at position 20"],
    ["%host.service.zk[1a]%", "A service number must consists of digits only."],
    ["%host.service.zk[]%", "No service number seen."],
    ["%host.service.zk[1%", "No ending bracket ']' seen."],
    ["%host.service.%", "macro is missing a service name"],
    ["%num.service.%", "macro is missing a service name"],
    ["%instance.self.service.%", "macro is missing a service name"],
    ["%abc%", "'abc' is not a valid macro name"],
    ["%HOST.service.x%", "'HOST.service.x' is not a valid macro name"],
    ["%ip.service.a.b.c%", "'ip.service.a.b.c' is not a valid macro name"],
    ["%host.self.service.x%", "'host.self.service.x' is not a valid macro name"],
  ];
  for (const [text, message] of cases) {
    rejects(t, () => x(text), "macro_syntax", message);
    rejects(t, () => validateMacros({ k: text }), "macro_syntax", message);
  }
});

test("macros - missing cluster data is an incomplete-cluster error", (t) => {
  rejects(t, () => x("%host.service.zookeeper[3]%"), "macro_incomplete_cluster", "There are fewer than 4 nodes with zookeeper on the cluster");
  rejects(t, () => x("%ip.service.none[0]%"), "macro_incomplete_cluster", "There are fewer than 1 nodes with none on the cluster");
  const partial = createMacroContext({
    nodes: [
      node("a", 1001, ["s"]),
      { id: "b", nodenum: 1002, services: ["s"], properties: {} },
    ],
  });
  rejects(t, () => expandString("%host.service.s%", partial, "a"), "macro_incomplete_cluster", "node b has no hostname for macro expansion.");
  rejects(t, () => expandString("%ip.service.s%", partial, "a"), "macro_incomplete_cluster", "node b has no ip for macro expansion.");
  rejects(t, () => expandString("%ip.self%", partial, "b"), "macro_incomplete_cluster", "node b has no ip for macro expansion.");
  // Coopr printed "null" for a missing hostname of an indexed macro; an error is clearer.
  rejects(t, () => expandString("%host.service.s[1]%", partial, "a"), "macro_incomplete_cluster", "node b has no hostname for macro expansion.");
  t.is(expandString("%host.self%", partial, "b"), "%host.self%");
  rejects(t, () => expandString("%host.self%", partial, "zz"), "bad_request", "node zz is not in the cluster");
});

test("macros - errors in a config name the path and the node", (t) => {
  const err = t.throws(() => expandConfig({ a: { b: ["ok", "%host.service.x[0]%"] } }, ctx, "zk1"));
  t.like(err, { code: "macro_incomplete_cluster", details: { path: "a.b.1", nodeId: "zk1" } });
  const syntax = t.throws(() => validateMacros({ a: [{ c: "%nope%" }] }));
  t.like(syntax, { code: "macro_syntax", details: { path: "a.0.c", macro: "%nope%" } });
});

// ---- config trees ----

test("macros - every string of a nested config is expanded; other values, keys and the input are untouched", (t) => {
  const config: Json = {
    "%host.self%": "%host.self%",
    list: ["%num.service.base%", 1, true, null, { deep: ["%ip.self%"] }],
    n: 42,
    plain: { a: "b", c: [1, 2] },
  };
  const snapshot = JSON.stringify(config);
  const out = expandConfig(config, ctx, "zk3") as Record<string, Json>;
  t.deepEqual(out, {
    "%host.self%": "zk3.example.com",
    list: ["4", 1, true, null, { deep: ["10.0.0.3"] }],
    n: 42,
    plain: { a: "b", c: [1, 2] },
  });
  t.is(JSON.stringify(config), snapshot);
  t.is(out.plain, (config as Record<string, Json>).plain); // unchanged subtrees are shared
  const noMacros = { a: ["b", { c: "d" }] };
  t.is(expandConfig(noMacros, ctx, "zk1"), noMacros);
  t.is(expandConfig("%host.self%", ctx, "zk1"), "zk1.example.com");
  t.is(expandConfig(7, ctx, "zk1"), 7);
});

test("macros - path expands only that subtree", (t) => {
  const config = { a: { b: "%host.self%" }, c: "%host.self%" };
  t.deepEqual(expandConfig(config, ctx, "zk1", { path: ["a"] }), { a: { b: "zk1.example.com" }, c: "%host.self%" });
  t.is(expandConfig(config, ctx, "zk1", { path: ["missing"] }), config);
  t.is(expandConfig(config, ctx, "zk1", { path: ["c", "deeper"] }), config);
});

/** A k8s-distributed cluster with every optional service: the control plane and two workers. */
const k8sWorker = ["base", "containerd", "coredns", "ingress-nginx", "kube-proxy", "kubelet", "node-exporter"];
const k8sLayout: MacroNode[] = [
  node("control", 1000, [
    "base", "containerd", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler",
    "node-exporter", "prometheus", "grafana", "postgresql",
  ], { hostname: "k1000.local" }),
  node("w1", 1001, k8sWorker, { hostname: "k1001.local" }),
  node("w2", 1002, k8sWorker, { hostname: "k1002.local" }),
];

test("macros - compileConfig parses once and gives the same results", (t) => {
  const config = template("k8s-distributed").defaults.config;
  const compiled = compileConfig(config);
  t.is(compiled.source, config);
  // kubernetes: cluster 3, etcd 3, apiserver 3, kubelet 5, coredns 1, ingress 1; prometheus 3 (the %% escape
  // is no macro); grafana 2; postgresql 1
  t.is(compiled.macroCount, 22);
  const k8sCtx = createMacroContext({ nodes: k8sLayout, owner: "bob" });
  for (const n of k8sLayout) t.deepEqual(expandConfig(compiled, k8sCtx, n.id), expandConfig(config, k8sCtx, n.id));
  // on a cluster without kube-apiserver both fail alike on the indexed macro
  const err = t.throws(() => expandConfig(config, ctx, "zk1"));
  t.deepEqual(t.throws(() => expandConfig(compiled, ctx, "zk1")), err);
  t.like(err, { code: "macro_incomplete_cluster", details: { path: "kubernetes.cluster.control_plane_endpoint", nodeId: "zk1" } });
});

test("macros - every catalog template's config is syntactically valid", (t) => {
  for (const tpl of fixtureTemplates()) t.notThrows(() => validateMacros(tpl.defaults.config), tpl.name);
});

test("macros - k8s-distributed config expanded for a sample layout", (t) => {
  const c = createMacroContext({ nodes: k8sLayout, owner: "bob" });
  const config = template("k8s-distributed").defaults.config as any;
  const forW1 = expandConfig(config, c, "w1") as any;
  t.deepEqual(forW1.kubernetes, {
    cluster: {
      owner: "bob",
      pod_cidr: "10.244.0.0/16",
      service_cidr: "10.96.0.0/12",
      control_plane_endpoint: "https://k1000.local:6443",
      worker_count: "2",
    },
    etcd: {
      // a format with two $: both take the value
      initial_cluster: "k1000.local=https://k1000.local:2380",
      listen_client_urls: "https://10.0.0.1:2379",
      // w1 runs no etcd: the macro has no value and stays
      member_index: "%instance.self.service.etcd%",
      snapshot_count: 10000,
    },
    apiserver: {
      advertise_address: "10.0.0.0",
      external_address: "203.0.113.0",
      etcd_servers: "https://k1000.local:2379",
      secure_port: 6443,
      admission_plugins: ["NodeRestriction", "PodSecurity"],
    },
    kubelet: {
      hostname_override: "k1001.local",
      node_ip: "10.0.0.1",
      public_ip: "203.0.113.1",
      worker_index: "1",
      cluster_dns: "10.0.0.1,10.0.0.2",
      max_pods: 110,
      rotate_certificates: true,
    },
    kube_proxy: config.kubernetes.kube_proxy,
    coredns: { replicas: "2", upstream: ["1.1.1.1", "9.9.9.9"] },
    ingress: { endpoints: "k1001.local:443 k1002.local:443" },
  });
  t.is(forW1.kubernetes.kube_proxy, config.kubernetes.kube_proxy, "a subtree without macros is shared");
  t.deepEqual(forW1.prometheus, {
    scrape_targets: ["k1000.local:9100,k1001.local:9100,k1002.local:9100", "k1000.local:6443"],
    retention: "15d",
    alert_summary: "CPU above 90%% on k1001.local",
  });
  t.deepEqual(forW1.grafana, { datasource_url: "http://k1000.local:9090", database: { host: "k1000.local:5432", name: "grafana", user: "grafana" } });
  t.deepEqual(forW1.postgresql, { listen_addresses: "10.0.0.0", max_connections: 200 });
  const forControl = expandConfig(config, c, "control") as any;
  t.like(forControl.kubernetes.etcd, { listen_client_urls: "https://10.0.0.0:2379", member_index: "1" });
  t.like(forControl.kubernetes.kubelet, {
    hostname_override: "k1000.local",
    node_ip: "10.0.0.0",
    public_ip: "203.0.113.0",
    worker_index: "%instance.self.service.kubelet%",
  });
  t.is(forControl.prometheus.alert_summary, "CPU above 90%% on k1000.local");
  // Only the self macros differ between nodes.
  const withoutSelf = (expanded: any) => ({
    ...expanded,
    kubernetes: { ...expanded.kubernetes, etcd: undefined, kubelet: undefined },
    prometheus: { ...expanded.prometheus, alert_summary: undefined },
  });
  t.deepEqual(withoutSelf(forControl), withoutSelf(forW1));
  t.is((expandConfig(config, c, "w2") as any).kubernetes.kubelet.worker_index, "2");
});

// ---- properties ----

test("macros properties - list, indexed, num and instance forms agree with the nodenum order", (t) => {
  const clusterArb = fc
    .uniqueArray(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 12 })
    .chain((nums) =>
      fc.tuple(
        fc.constant(nums),
        fc.array(fc.subarray(["a", "b", "c"]), { minLength: nums.length, maxLength: nums.length }),
      ),
    );
  fc.assert(
    fc.property(clusterArb, ([nums, services]) => {
      const ns: MacroNode[] = nums.map((n, i) => ({
        id: `n${i}`,
        nodenum: n,
        services: services[i] ?? [],
        properties: { hostname: `h${n}`, ipaddresses: { bind_v4: `ip${n}` } },
      }));
      const c = createMacroContext({ nodes: ns });
      const self = ns[0]!.id;
      for (const s of ["a", "b", "c"]) {
        const holders = ns.filter((n) => n.services.includes(s)).sort((p, q) => p.nodenum - q.nodenum);
        const list = expandString(`%host.service.${s}%`, c, self);
        if (holders.length === 0 ? list !== `%host.service.${s}%` : list !== holders.map((h) => `h${h.nodenum}`).join(",")) return false;
        if (expandString(`%num.service.${s}%`, c, self) !== String(holders.length)) return false;
        for (let i = 0; i < holders.length; i++) {
          if (expandString(`%ip.service.${s}[${i}]%`, c, self) !== `ip${holders[i]!.nodenum}`) return false;
          if (expandString(`%instance.self.service.${s}%`, c, holders[i]!.id) !== String(i + 1)) return false;
        }
        const mapped = expandString(`%join(map(host.service.${s},'<$>'),'|')%`, c, self);
        if (holders.length > 0 && mapped !== holders.map((h) => `<h${h.nodenum}>`).join("|")) return false;
      }
      return true;
    }),
    { numRuns: 300 },
  );
  t.pass();
});
