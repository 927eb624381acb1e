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
  node("zk3", 1003, ["base", "zookeeper-server"]),
  node("zk1", 1001, ["base", "zookeeper-server", "hadoop-hdfs-namenode"]),
  node("zk2", 1002, ["base", "zookeeper-server"]),
  node("db", 1004, ["base", "mysql-server"]),
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
  t.is(x("%host.service.zookeeper-server%"), "zk1.example.com,zk2.example.com,zk3.example.com");
  t.is(x("hdfs://%host.service.hadoop-hdfs-namenode%:8020/x"), "hdfs://zk1.example.com:8020/x");
});

test("macros - ip.service uses bind_v4 by default; typed forms pick the ip type", (t) => {
  t.is(x("%ip.service.zookeeper-server%"), "10.0.0.1,10.0.0.2,10.0.0.3");
  t.is(x("%ip.bind_v4.service.mysql-server%"), "10.0.0.4");
  t.is(x("%ip.access_v4.service.zookeeper-server%"), "203.0.113.1,203.0.113.2,203.0.113.3");
});

test("macros - self forms: host.self, ip.self, ip.<type>.self", (t) => {
  t.is(x("%host.self%"), "zk2.example.com");
  t.is(x("%ip.self%"), "10.0.0.2");
  t.is(x("%ip.bind_v4.self%"), "10.0.0.2");
  t.is(x("%ip.access_v4.self%", "db"), "203.0.113.4");
});

test("macros - indexed forms pick the i-th node (0-based, by nodenum)", (t) => {
  t.is(x("%host.service.zookeeper-server[0]%"), "zk1.example.com");
  t.is(x("%host.service.zookeeper-server[2]%"), "zk3.example.com");
  t.is(x("%ip.service.zookeeper-server[1]%"), "10.0.0.2");
  t.is(x("%ip.access_v4.service.zookeeper-server[1]%"), "203.0.113.2");
  t.is(x("%join(map(host.service.zookeeper-server[1],'$:2181'),';')%"), "zk2.example.com:2181");
});

test("macros - num.service counts nodes, 0 when absent", (t) => {
  t.is(x("%num.service.zookeeper-server%"), "3");
  t.is(x("%num.service.nothing-here%"), "0");
  t.is(x("%join(num.service.base,'-')%"), "4");
});

test("macros - instance.self.service is the 1-based rank of this node; absent when the node lacks the service", (t) => {
  t.deepEqual(["zk1", "zk2", "zk3"].map((n) => x("%instance.self.service.zookeeper-server%", n)), ["1", "2", "3"]);
  t.is(x("id=%instance.self.service.zookeeper-server%", "db"), "id=%instance.self.service.zookeeper-server%");
});

test("macros - an instance number on a macro that takes none is ignored, as Coopr did", (t) => {
  t.is(x("%cluster.owner[0]%"), x("%cluster.owner%"));
  t.is(x("%host.self[5]%"), x("%host.self%"));
  t.is(x("%num.service.zookeeper-server[5]%"), "3");
  t.is(x("%instance.self.service.zookeeper-server[2]%", "zk1"), "1");
  t.notThrows(() => validateMacros({ a: "%cluster.owner[0]%", b: "%ip.self[1]%" }));
});

test("macros - cluster.owner", (t) => {
  t.is(x("%cluster.owner%"), "alice");
  const noOwner = createMacroContext({ nodes });
  t.is(expandString("%cluster.owner%", noOwner, "zk1"), "%cluster.owner%");
});

test("macros - join and map", (t) => {
  t.is(x("%join(map(host.service.zookeeper-server,'$:2181'),',')%"), "zk1.example.com:2181,zk2.example.com:2181,zk3.example.com:2181");
  t.is(x("%join(host.service.zookeeper-server,' ')%"), "zk1.example.com zk2.example.com zk3.example.com");
  t.is(x("%map(ip.service.zookeeper-server,\"$:2888:3888\")%"), "10.0.0.1:2888:3888,10.0.0.2:2888:3888,10.0.0.3:2888:3888");
  t.is(x("%map(num.service.base,'$$$')%"), "$4"); // $$ is a literal $
  t.is(x("%join(map(host.service.hive-metastore,'thrift://$:9083'),',')%"), "%join(map(host.service.hive-metastore,'thrift://$:9083'),',')%");
});

test("macros - a macro without value stays as is unless another macro in the string has one", (t) => {
  t.is(x("%host.service.none%"), "%host.service.none%");
  t.is(x("a %host.service.none% b %ip.service.none% c"), "a %host.service.none% b %ip.service.none% c");
  t.is(x("a %host.service.none% b %host.service.mysql-server% c"), "a  b db.example.com c");
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

test("macros - the spec's single ipaddress property serves bind_v4 when ipaddresses lacks it", (t) => {
  const c = createMacroContext({ nodes: [{ id: "a", nodenum: 1, services: ["s"], properties: { hostname: "a", ipaddress: "192.0.2.7" } }] });
  t.is(expandString("%ip.service.s% %ip.self%", c, "a"), "192.0.2.7 192.0.2.7");
  rejects(t, () => expandString("%ip.access_v4.self%", c, "a"), "macro_incomplete_cluster", "node a has no ip for macro expansion.");
});

// ---- errors ----

test("macros - malformed macros are syntax errors with Coopr's messages", (t) => {
  const cases: [string, string][] = [
    ["50% and 60%", "A macro name must not be empty."],
    ["50% of %host.service.mysql-server%", "A macro name must not be empty."],
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
  rejects(t, () => x("%host.service.zookeeper-server[3]%"), "macro_incomplete_cluster", "There are fewer than 4 nodes with zookeeper-server on the cluster");
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

test("macros - compileConfig parses once and gives the same results", (t) => {
  const config = template("hadoop-distributed").defaults.config;
  const compiled = compileConfig(config);
  t.is(compiled.source, config);
  t.is(compiled.macroCount, 14);
  for (const n of nodes) t.deepEqual(expandConfig(compiled, ctx, n.id), expandConfig(config, ctx, n.id));
});

test("macros - every fixture template's config is syntactically valid", (t) => {
  for (const tpl of fixtureTemplates()) t.notThrows(() => validateMacros(tpl.defaults.config), tpl.name);
});

test("macros - hadoop-distributed config expanded for a sample layout", (t) => {
  const layout: MacroNode[] = [
    node("master", 1000, [
      "base", "hadoop-hdfs-namenode", "hadoop-yarn-resourcemanager", "hadoop-mapreduce-historyserver", "zookeeper-server",
      "hbase-master", "mysql-server", "hive-metastore-database", "hive-metastore", "hive-server2",
    ], { hostname: "hd1000.local" }),
    node("w1", 1001, ["base", "hadoop-hdfs-datanode", "hadoop-yarn-nodemanager", "hbase-regionserver"], { hostname: "hd1001.local" }),
    node("w2", 1002, ["base", "hadoop-hdfs-datanode", "hadoop-yarn-nodemanager", "hbase-regionserver"], { hostname: "hd1002.local" }),
  ];
  const c = createMacroContext({ nodes: layout, owner: "bob" });
  const config = template("hadoop-distributed").defaults.config;
  const forW1 = expandConfig(config, c, "w1") as any;
  t.deepEqual(forW1.hadoop.core_site, { "fs.defaultFS": "hdfs://hd1000.local", "io.file.buffer.size": "131072", "hadoop.tmp.dir": "/data/hadoop" });
  t.deepEqual(forW1.hadoop.hdfs_site, {
    "dfs.datanode.max.transfer.threads": "4096",
    "dfs.replication": "2",
    "dfs.namenode.rpc-bind-host": "10.0.0.1",
    "dfs.namenode.servicerpc-bind-host": "10.0.0.1",
    "dfs.namenode.datanode.registration.ip-hostname-check": "false",
  });
  t.deepEqual(forW1.hadoop.yarn_site, {
    "yarn.resourcemanager.hostname": "hd1000.local",
    "yarn.resourcemanager.scheduler.address": "hd1000.local:8030",
    "yarn.resourcemanager.resource-tracker.address": "hd1000.local:8031",
    "yarn.resourcemanager.address": "hd1000.local:8032",
    "yarn.resourcemanager.admin.address": "hd1000.local:8033",
  });
  t.is(forW1.hadoop.mapred_site, (config as any).hadoop.mapred_site);
  t.deepEqual(forW1.hbase.hbase_site, {
    "hbase.rootdir": "hdfs://hd1000.local/hbase",
    "hbase.cluster.distributed": "true",
    "hbase.zookeeper.quorum": "hd1000.local:2181",
  });
  t.like(forW1.hive.hive_site, {
    "javax.jdo.option.ConnectionURL": "jdbc:mysql://hd1000.local:3306/hive",
    "hive.metastore.uris": "thrift://hd1000.local:9083",
    "hive.zookeeper.quorum": "hd1000.local",
  });
  t.is(forW1.mysql.bind_address, "10.0.0.0");
  t.is(forW1.mysql.server, (config as any).mysql.server);
  const forMaster = expandConfig(config, c, "master") as any;
  t.is(forMaster.hadoop.hdfs_site["dfs.namenode.rpc-bind-host"], "10.0.0.0");
  t.deepEqual({ ...forMaster, hadoop: undefined }, { ...forW1, hadoop: undefined });
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
