/** Task messages: each carries its own node, every node of the cluster up to MAX_NODES_IN_TASK, and its service action. */
import test from "ava";
import { decode, encode, type Service, encodeTaskMessage } from "@corral/contracts";
import { buildTaskMessage, MAX_NODES_IN_TASK, type TaskBuildContext } from "../src/domain/task-builder.js";
import type { ClusterNode, ClusterRecord } from "../src/domain/records.js";

const web: Service = {
  name: "web",
  description: "",
  dependencies: { conflicts: [], install: { requires: [], uses: [] }, runtime: { requires: [], uses: [] }, provides: [] },
  provisioner: { actions: { install: { type: "shell", fields: { script: "install-web" } } } },
} as unknown as Service;

const node = (nodenum: number, services: string[]): ClusterNode => ({
  id: `c1-${nodenum}`,
  clusterId: "c1",
  nodenum,
  services,
  properties: { hostname: `n${nodenum}.example`, ipaddresses: { access_v4: `10.0.0.${nodenum}` }, hardwaretype: "small", imagetype: "deb" },
  results: { providerid: `vm-${nodenum}` },
  actions: [],
  applied: [],
});

function context(count: number): TaskBuildContext {
  const nodes = new Map(Array.from({ length: count }, (_, i) => node(1000 + i, i === 0 ? ["web"] : [])).map((n) => [n.id, n]));
  const cluster = {
    id: "c1",
    tenant: "t1",
    config: { answer: 42 },
    provider: { name: "p", providertype: "sim", provisioner: { region: "x" } },
  } as unknown as ClusterRecord;
  return {
    cluster,
    planId: "c1-001",
    nodes,
    defs: new Map([["web", web]]),
    credentials: { token: "secret" },
    expandedConfig: (nodeId) => ({ expandedFor: nodeId }),
    now: 5,
  };
}

test("task builder - the tasks of one context each carry their own node, every node, and their service's action", (t) => {
  const ctx = context(3);
  const create = buildTaskMessage(ctx, { taskName: "CREATE", nodeId: "c1-1001", service: "" }, "c1-001-1", 1, "CREATE");
  const install = buildTaskMessage(ctx, { taskName: "INSTALL", nodeId: "c1-1000", service: "web" }, "c1-001-2", 2, "INSTALL");

  t.is(create.config.hostname, "n1001.example");
  t.deepEqual(create.config.services, []);
  t.deepEqual(create.config.cluster, { answer: 42 }, "node tasks get the cluster config as it is");
  t.deepEqual(create.config.results, { providerid: "vm-1001" });
  t.deepEqual(create.config.provider.provisioner, { region: "x", token: "secret" });
  t.is(create.config.service, undefined);

  t.is(install.config.hostname, "n1000.example");
  t.deepEqual(install.config.automators, ["shell"]);
  t.deepEqual(install.config.cluster, { expandedFor: "c1-1000" }, "service tasks get it expanded for their node");
  t.deepEqual(install.config.service, { name: "web", action: { type: "shell", fields: { script: "install-web" } } });
  t.is(install.dispatch, 2);

  for (const m of [create, install]) {
    t.deepEqual(Object.keys(m.config.nodes ?? {}), ["c1-1000", "c1-1001", "c1-1002"]);
    t.is(m.config.nodes?.["c1-1002"]?.ipaddresses["access_v4"], "10.0.0.1002");
    t.is(m.config.nodesOmitted, undefined);
  }
});

test("task builder - above MAX_NODES_IN_TASK nodes a task carries only its own node", (t) => {
  const ctx = context(MAX_NODES_IN_TASK + 1);
  const m = buildTaskMessage(ctx, { taskName: "CONFIRM", nodeId: "c1-1005", service: "" }, "c1-001-9", 1, "CONFIRM");
  t.is(m.config.nodes, undefined);
  t.true(m.config.nodesOmitted);
  t.is(m.config.hostname, "n1005.example");
});

test("task builder - encoded messages of one context decode to the messages, with or without the node list", (t) => {
  for (const count of [3, MAX_NODES_IN_TASK + 1]) {
    const ctx = context(count);
    const messages = ["c1-1000", "c1-1001", "c1-1002"].map((nodeId, i) =>
      buildTaskMessage(ctx, { taskName: "INSTALL", nodeId, service: i === 0 ? "web" : "" }, `c1-001-${i}`, 1, "INSTALL"),
    );
    for (const m of messages) {
      const bytes = encodeTaskMessage(m);
      t.deepEqual(decode(bytes), decode(encode(m)));
      t.true(bytes.length <= encode(m).length, "the same entries (in another order, headers at their smallest)");
    }
    t.is(messages[0]?.config.provider, messages[1]?.config.provider, "one provider object for the context: encoded once");
  }
});

test("task builder - an action with hosts: service carries the nodes of its step, with how to reach them and nothing else", (t) => {
  const rolling = {
    ...web,
    name: "db",
    provisioner: { actions: { install: { type: "ansible", fields: { playbook: "db/site.yml", hosts: "service" } } } },
  } as unknown as Service;
  const ctx = context(5);
  (ctx.defs as Map<string, Service>).set("db", rolling);
  for (const [i, n] of [...ctx.nodes.values()].entries()) {
    n.results = { providerid: `vm-${i}`, "ssh-auth": { user: "root", cluster_key: true }, ssh_host_keys: { "ssh-ed25519": `key-${i}` }, ansible_python: "/usr/bin/python3" };
  }
  const stage = [
    { taskName: "INSTALL" as const, nodeId: "c1-1002", service: "db" },
    { taskName: "INSTALL" as const, nodeId: "c1-1000", service: "web" },
    { taskName: "INSTALL" as const, nodeId: "c1-1001", service: "db" },
    { taskName: "CONFIGURE" as const, nodeId: "c1-1003", service: "db" },
    { taskName: "INSTALL" as const, nodeId: "c1-1004", service: "db" },
  ];
  const build = (i: number) => buildTaskMessage(ctx, stage[i]!, `c1-001-${i}`, 1, stage[i]!.taskName, stage);
  const [first, webTask, second, , third] = stage.map((_, i) => build(i));
  t.deepEqual(first!.config.stepNodes, {
    "c1-1002": { "ssh-auth": { user: "root", cluster_key: true }, ssh_host_keys: { "ssh-ed25519": "key-2" } },
    "c1-1001": { "ssh-auth": { user: "root", cluster_key: true }, ssh_host_keys: { "ssh-ed25519": "key-1" } },
    "c1-1004": { "ssh-auth": { user: "root", cluster_key: true }, ssh_host_keys: { "ssh-ed25519": "key-4" } },
  }, "the stage's INSTALL of db, this node included; not CONFIGURE of db, not INSTALL of web; only ssh-auth and host keys");
  t.is(second!.config.stepNodes, first!.config.stepNodes, "one object for the step: encoded once");
  t.is(third!.config.stepNodes, first!.config.stepNodes);
  t.is(webTask!.config.stepNodes, undefined, "an action without hosts: service carries none");
  t.is(buildTaskMessage(ctx, stage[0]!, "c1-001-0", 2, "INSTALL").config.stepNodes, undefined, "nor a task built without its stage");
  const bytes = encodeTaskMessage(first!);
  t.deepEqual(decode(bytes), decode(encode(first!)));

  const large = context(MAX_NODES_IN_TASK + 1);
  (large.defs as Map<string, Service>).set("db", rolling);
  const omitted = buildTaskMessage(large, stage[0]!, "c1-001-0", 1, "INSTALL", stage);
  t.true(omitted.config.nodesOmitted);
  t.is(omitted.config.stepNodes, undefined, "above MAX_NODES_IN_TASK, no step nodes (the automator says why it cannot play them)");
});
