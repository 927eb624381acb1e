/** The pure parts of removing nodes: the numbering a cluster keeps, and whose config a removal changes. */
import test from "ava";
import { clusterNodeIds, nextNodenumOf, numberingWithout } from "../src/domain/ids.js";
import { leavingNodeIds, remainingWithChangedConfig } from "../src/domain/node-config.js";
import { testNode } from "./helpers/nodes.js";

test("numbering - removed nodes leave the list and their nodenums are never given again", (t) => {
  const fresh = { id: "c1", numNodes: 5 };
  const after = { id: "c1", ...numberingWithout(fresh, [1002, 1004]) };
  t.deepEqual(after, { id: "c1", numNodes: 3, nextNodenum: 1005, removedNodenums: [1002, 1004] });
  t.deepEqual(clusterNodeIds(after), ["c1-1000", "c1-1001", "c1-1003"]);
  t.is(nextNodenumOf(after), 1005, "the next node follows the removed last one");

  const again = { id: "c1", ...numberingWithout(after, [1000, 1002, 1000]) };
  t.deepEqual(again, { id: "c1", numNodes: 2, nextNodenum: 1005, removedNodenums: [1000, 1002, 1004] }, "a nodenum already gone or given twice counts once");
  t.deepEqual(clusterNodeIds(again), ["c1-1001", "c1-1003"]);
});

const node = testNode;

test("changed config - the remaining nodes whose peer list loses the removed node", (t) => {
  const nodes = [node(1000, ["base", "db"]), node(1001, ["base", "web"]), node(1002, ["base", "web"])];
  const peers = { peers: "%join(host.service.web,',')%" };
  t.deepEqual(remainingWithChangedConfig(peers, "alice", nodes, new Set(["c1-1002"])), ["c1-1000", "c1-1001"]);
  t.deepEqual(remainingWithChangedConfig({ me: "%host.self%" }, "alice", nodes, new Set(["c1-1002"])), [], "self macros change nothing");
});

test("leaving nodes - the nodes of the running removal only", (t) => {
  const cluster = { id: "c1", leavingNodes: { planId: "c1-7", nodenums: [1002, 1004] } };
  t.deepEqual([...leavingNodeIds(cluster, "c1-7")], ["c1-1002", "c1-1004"]);
  t.deepEqual([...leavingNodeIds(cluster, "c1-8")], [], "another plan's tasks see every node");
  t.deepEqual([...leavingNodeIds({ id: "c1" }, "c1-7")], []);
});
