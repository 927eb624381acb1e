/**
 * The pure parts of replacing and repairing nodes, and of what a removal's end does to the cluster record: the
 * services that leave with the last nodes holding them, the nodes a failed plan keeps, the refusal of a job
 * prepared before the nodes it takes off had left, and which node an automatic repair replaces.
 */
import test from "ava";
import type { ClusterTemplate, CorralError, NodeHealth, Provider, Service } from "@corral/contracts";
import { startActor } from "../src/domain/actors.js";
import { CLUSTER_MACHINE_VERSION, clusterMachine, isActionAllowed, type ClusterContext, type ClusterEvent } from "../src/domain/cluster-machine.js";
import { newClusterRecord } from "../src/domain/cluster-record.js";
import { statusOf } from "../src/domain/cluster-status.js";
import { clusterStep } from "../src/domain/cluster-steps.js";
import { clusterNodeIds } from "../src/domain/ids.js";
import { changedByReplacement } from "../src/domain/node-config.js";
import type { ClusterRecord } from "../src/domain/records.js";
import { nodeDueForRepair, repairPolicyOf } from "../src/engine/repair/policy.js";
import { testNode } from "./helpers/nodes.js";

const serviceDef = (name: string): Service => ({ name, description: "", dependencies: {}, provisioner: { actions: {} } }) as unknown as Service;

const template = (administration?: unknown): ClusterTemplate =>
  ({
    name: "t",
    description: "",
    compatibility: { hardwaretypes: [], imagetypes: [], services: [] },
    defaults: { services: ["base"], provider: "p", config: {} },
    ...(administration !== undefined ? { administration } : {}),
  }) as unknown as ClusterTemplate;

/** An active 3-node cluster with `base` on every node and `cache` on one. */
function activeCluster(): ClusterRecord {
  const start = startActor<ClusterContext>(clusterMachine, CLUSTER_MACHINE_VERSION, { planId: "c1-001" });
  const record = newClusterRecord(
    {
      id: "c1",
      tenant: "t1",
      name: "one",
      description: "",
      ownerId: "alice",
      createTime: 0,
      expireTime: 0,
      provider: { name: "p", providertype: "sim" } as unknown as Provider,
      clusterTemplate: template(),
      services: ["base", "cache"],
      serviceDefs: [serviceDef("base"), serviceDef("cache")],
      numNodes: 3,
      config: {},
      dnsSuffix: "example",
      planId: "c1-001",
    },
    start.persisted,
  );
  return step(record, { type: "job.succeeded", planId: "c1-001" });
}

function step(record: ClusterRecord, ...events: ClusterEvent[]): ClusterRecord {
  return clusterStep(record, clusterMachine, events)?.record ?? record;
}

test("replace_node - allowed on an active cluster only, as the other node changes", (t) => {
  t.true(isActionAllowed("active", "replace_node"));
  for (const status of ["pending", "inconsistent", "incomplete", "terminated"] as const) t.false(isActionAllowed(status, "replace_node"), status);
});

/** The removal of node 1002, the only one with `cache`, started as plan c1-002. */
const removalStarted = () =>
  step(activeCluster(), { type: "job.started", action: "remove_nodes", planId: "c1-002", leavingNodenums: [1002], leavingServices: ["cache"] });

test("a removal that succeeds takes its nodes and the services no remaining node holds off the cluster", (t) => {
  const started = removalStarted();
  t.deepEqual(started.leavingNodes, { planId: "c1-002", nodenums: [1002], services: ["cache"] });
  t.deepEqual(started.services, ["base", "cache"], "the services stay while the plan runs");
  const done = step(started, { type: "job.succeeded", planId: "c1-002" });
  t.is(statusOf(done), "active");
  t.deepEqual(clusterNodeIds(done), ["c1-1000", "c1-1001"]);
  t.deepEqual(done.services, ["base"]);
  t.deepEqual(done.serviceDefs.map((d) => d.name), ["base"]);
  t.is(done.leavingNodes, undefined);
});

test("a removal that fails keeps its nodes and their services; the cluster is inconsistent", (t) => {
  const failed = step(removalStarted(), { type: "job.failed", planId: "c1-002" });
  t.is(statusOf(failed), "inconsistent");
  t.deepEqual(clusterNodeIds(failed), ["c1-1000", "c1-1001", "c1-1002"]);
  t.is(failed.numNodes, 3);
  t.deepEqual(failed.services, ["base", "cache"]);
  t.is(failed.leavingNodes, undefined);
});

test("a replacement counts the new node at its start and drops the old one when it succeeds", (t) => {
  const started = step(activeCluster(), {
    type: "job.started",
    action: "replace_node",
    planId: "c1-002",
    changes: { numNodes: 4, nextNodenum: 1004 },
    leavingNodenums: [1001],
  });
  t.deepEqual(clusterNodeIds(started), ["c1-1000", "c1-1001", "c1-1002", "c1-1003"]);
  const done = step(started, { type: "job.succeeded", planId: "c1-002" });
  t.like(done, { numNodes: 3, nextNodenum: 1004, removedNodenums: [1001], services: ["base", "cache"] });
  t.deepEqual(clusterNodeIds(done), ["c1-1000", "c1-1002", "c1-1003"]);
  const failed = step(started, { type: "job.failed", planId: "c1-002" });
  t.deepEqual(clusterNodeIds(failed), ["c1-1000", "c1-1001", "c1-1002", "c1-1003"], "a failed replacement keeps both nodes");
});

test("a job prepared before the node it takes off left is refused (409): never two replacements of one node", (t) => {
  const replace1001 = (planId: string): ClusterEvent => ({
    type: "job.started",
    action: "replace_node",
    planId,
    changes: { numNodes: 4, nextNodenum: 1004 },
    leavingNodenums: [1001],
  });
  const done = step(activeCluster(), replace1001("c1-002"), { type: "job.succeeded", planId: "c1-002" });
  const again = replace1001("c1-003");
  const err = t.throws<CorralError>(() => clusterStep(done, clusterMachine, [again]));
  t.like(err, { status: 409, code: "cluster_changed" });
  t.regex(err?.message ?? "", /c1-1001/);
});

const node = testNode;

test("changed config - a replacement changes the peer lists that named the old node", (t) => {
  const nodes = [node(1000, ["base", "db"]), node(1001, ["base", "web"]), node(1002, ["base", "web"])];
  const peers = { peers: "%join(host.service.web,',')%" };
  const added = [node(1003, ["base", "web"])];
  t.deepEqual(changedByReplacement(peers, "alice", nodes, new Set(["c1-1001"]), added), ["c1-1000", "c1-1002"]);
  t.deepEqual(changedByReplacement({ me: "%host.self%" }, "alice", nodes, new Set(["c1-1001"]), added), []);
});

test("repair policy - on only with auto true and a usable afterSeconds", (t) => {
  const lease = { leaseduration: { initial: 0, max: 0, step: 0 } };
  t.deepEqual(repairPolicyOf(template({ ...lease, repair: { auto: true, afterSeconds: 30 } })), { afterMs: 30_000 });
  t.is(repairPolicyOf(template()), undefined, "no administration");
  t.is(repairPolicyOf(template(lease)), undefined, "no repair");
  t.is(repairPolicyOf(template({ ...lease, repair: { auto: false, afterSeconds: 30 } })), undefined, "auto false");
  t.is(repairPolicyOf(template({ ...lease, repair: { auto: "true", afterSeconds: 30 } })), undefined, "auto not a boolean");
  t.is(repairPolicyOf(template({ ...lease, repair: { auto: true, afterSeconds: -1 } })), undefined, "a negative time");
  t.is(repairPolicyOf(template({ ...lease, repair: { auto: true } })), undefined, "no time");
});

test("repair - the node missing or unreachable for longer than the policy's time, lowest nodenum first", (t) => {
  const health = (state: NodeHealth["state"], since: number): NodeHealth => ({ state, since, checkedAt: since, message: "" });
  const policy = { afterMs: 10_000 };
  const now = 100_000;
  const nodes = [
    node(1000, ["base"], health("healthy", 0)),
    node(1001, ["base"], health("missing", now - 5_000)),
    node(1002, ["base"], health("unreachable", now - 20_000)),
    node(1003, ["base"], health("missing", now - 30_000)),
    node(1004, ["base"], health("unknown", 0)),
    node(1005, ["base"]),
  ];
  t.is(nodeDueForRepair(nodes, policy, now)?.id, "c1-1002");
  t.is(nodeDueForRepair(nodes.slice(0, 2), policy, now), undefined, "not missing long enough");
  t.is(nodeDueForRepair([nodes[0]!, nodes[4]!, nodes[5]!], { afterMs: 0 }, now), undefined, "healthy, unknown and unchecked nodes stay");
  t.is(nodeDueForRepair(nodes.slice(0, 2), policy, now + 6_000)?.id, "c1-1001", "once its time has passed");
});
