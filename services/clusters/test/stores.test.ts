import { TaskName, type Tenant } from "@corral/contracts";
import { listKeys, openBucket, putValue, readBytes, readValue, silentLogger } from "@corral/shared";
import { openClusterStore } from "../src/adapters/cluster-store.js";
import { createCounters } from "../src/adapters/counters.js";
import { createNodeStore, GROUP_MAX_BYTES, GROUPED_NODES, type NodeChange } from "../src/adapters/node-store.js";
import { createPlanStore } from "../src/adapters/plan-store.js";
import { openUsageStore } from "../src/adapters/usage-store.js";
import { DispatchMemory } from "../src/actor/dispatch-memory.js";
import { INLINE_PLAN_TASKS, type ClusterNode, type ClusterRecord, type PlanRecord, type StoredTask } from "../src/domain/records.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";

const test = testWithNats("clusters-stores-test");

test("counters - two processes taking blocks concurrently never hand out a number twice", async (t) => {
  const kv = await openBucket(t.context.nc, "counters_blocks_test");
  // Two Counters over one bucket stand for two processes (each has its own blocks and cache).
  const a = createCounters(kv);
  const b = createCounters(kv);
  const taken = await Promise.all(
    Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? a : b).next("clusters", { block: 16 })),
  );
  t.is(new Set(taken).size, taken.length);
  t.true(taken.every((n) => n >= 1));
  // Within one process, numbers come in increasing order.
  const fromA = await Promise.all(Array.from({ length: 40 }, () => a.next("clusters", { block: 16 })));
  t.deepEqual(fromA, [...fromA].sort((x, y) => x - y));
  // Without a block every number is written: consecutive.
  const plain = [await a.next("jobs"), await b.next("jobs"), await a.next("jobs")];
  t.deepEqual(plain, [1, 2, 3]);
});

const node = (clusterId: string, id: string, hostname: string): ClusterNode => ({
  id,
  clusterId,
  nodenum: 1000,
  services: [],
  properties: { hostname },
  results: {},
  actions: [],
  applied: [],
});

/** One node's change, as `modifyMany` takes it. */
const change = (nodeId: string, fn: (n: ClusterNode) => ClusterNode | undefined) => new Map([[nodeId, fn]]);
const hostnames = (nodes: ClusterNode[]) => nodes.map((n) => n.properties["hostname"]);

test("node store - cachedMany serves only what this process wrote or read, and all of it or nothing", async (t) => {
  const kv = await openBucket(t.context.nc, "nodes_cache_test");
  const mine = createNodeStore(kv);
  const theirs = createNodeStore(kv);
  await mine.putNew("c1", [node("c1", "c1-1000", "a"), node("c1", "c1-1001", "b")]);
  t.deepEqual(hostnames(mine.cachedMany("c1", ["c1-1000", "c1-1001"]) ?? []), ["a", "b"]);
  t.is(mine.cachedMany("c1", ["c1-1000", "c1-1002"]), undefined, "a node never seen: nothing");
  t.is(theirs.cachedMany("c1", ["c1-1000"]), undefined);
  // Another process changes a node: my cache is behind until a read or a compare-and-set tells it.
  await theirs.modifyMany("c1", change("c1-1000", (n) => ({ ...n, properties: { hostname: "a2" } })));
  t.is(mine.cachedMany("c1", ["c1-1000"])?.[0]?.properties["hostname"], "a");
  await mine.modifyMany("c1", change("c1-1000", (n) => ({ ...n, services: ["x"] })));
  t.like(mine.cachedMany("c1", ["c1-1000"])?.[0], { properties: { hostname: "a2" }, services: ["x"] });
});

test("node store - a small cluster's nodes are one key: changes of several nodes are one write, concurrent writers merge", async (t) => {
  const kv = await openBucket(t.context.nc, "nodes_group_test");
  const mine = createNodeStore(kv);
  const small = Array.from({ length: 5 }, (_, i) => node("c2", `c2-${1000 + i}`, `h${i}`));
  const ids = small.map((n) => n.id);
  await mine.putNew("c2", small);
  t.deepEqual(await listKeys(kv, "c2.>"), ["c2.nodes"], "one write for five nodes");
  const revisionOf = async () => (await readBytes(kv, "c2.nodes"))!.revision;

  const before = await revisionOf();
  const changed = await mine.modifyMany(
    "c2",
    new Map<string, NodeChange>([
      ["c2-1000", (n: ClusterNode) => ({ ...n, services: ["a"] })],
      ["c2-1002", (n: ClusterNode) => ({ ...n, services: ["b"] })],
      ["c2-1003", () => undefined],
      ["c2-1009", (n: ClusterNode) => ({ ...n, services: ["nobody"] })],
    ]),
  );
  t.deepEqual([...changed.keys()].sort(), ["c2-1000", "c2-1002"], "only the nodes changed, none made up");
  t.is(await revisionOf(), before + 1, "two nodes changed in one write");
  t.deepEqual(await listKeys(kv, "c2.>"), ["c2.nodes"]);

  // Two processes, each with a stale guess, change different nodes at once: compare-and-set keeps both.
  const theirs = createNodeStore(kv);
  t.deepEqual((await theirs.getMany("c2", ids)).map((n) => n.services.join(",")), ["a", "", "b", "", ""]);
  await mine.modifyMany("c2", change("c2-1004", (n) => ({ ...n, services: ["mine"] })));
  await Promise.all([
    theirs.modifyMany("c2", change("c2-1001", (n) => ({ ...n, services: ["theirs"] }))),
    mine.modifyMany("c2", change("c2-1003", (n) => ({ ...n, services: ["mine too"] }))),
  ]);
  t.deepEqual(
    (await createNodeStore(kv).getMany("c2", ids)).map((n) => n.services.join(",")),
    ["a", "theirs", "b", "mine too", "mine"],
    "no change lost",
  );
  t.like(await theirs.get("c2", "c2-1003"), { properties: { hostname: "h3" }, services: ["mine too"] });
  t.is(await theirs.get("c2", "c2-1009"), undefined);

  await mine.removeCluster("c2");
  t.deepEqual(await listKeys(kv, "c2.>"), [], "removal takes the group");
});

test("node store - a large cluster, and a group grown past its size limit, keep a key per node", async (t) => {
  const kv = await openBucket(t.context.nc, "nodes_apart_test");
  const mine = createNodeStore(kv);
  const large = Array.from({ length: GROUPED_NODES + 1 }, (_, i) => node("c3", `c3-${1000 + i}`, `h${i}`));
  await mine.putNew("c3", large);
  t.is((await listKeys(kv, "c3.>")).length, large.length + 1, "a key per node, and the group's mark");
  await mine.modifyMany("c3", change("c3-1064", (n) => ({ ...n, services: ["x"] })));
  t.like(await createNodeStore(kv).get("c3", "c3-1064"), { services: ["x"], properties: { hostname: "h64" } });
  t.like(await readValue(kv, "c3.c3-1064"), { value: { services: ["x"] } });

  const small = Array.from({ length: 3 }, (_, i) => node("c4", `c4-${1000 + i}`, `h${i}`));
  await mine.putNew("c4", small);
  // A node whose history has grown: the next write passes the limit and moves every node to its own key.
  const bulky = { taskId: "x", service: "", action: TaskName.Create, submitTime: 0, statusTime: 0, status: "failed" as const, stderr: "e".repeat(GROUP_MAX_BYTES) };
  await mine.modifyMany("c4", change("c4-1001", (n) => ({ ...n, actions: [bulky] })));
  t.deepEqual((await listKeys(kv, "c4.>")).sort(), ["c4.c4-1000", "c4.c4-1001", "c4.c4-1002", "c4.nodes"]);
  t.deepEqual((await readValue(kv, "c4.nodes"))?.value, { moved: true });
  // Another process, whose guess is the group, finds the mark and changes the node's own key.
  const theirs = createNodeStore(kv);
  t.is((await theirs.getMany("c4", ["c4-1001"]))[0]?.actions[0]?.stderr?.length, GROUP_MAX_BYTES);
  await theirs.modifyMany("c4", change("c4-1002", (n) => ({ ...n, services: ["y"] })));
  t.deepEqual(
    (await mine.getMany("c4", small.map((n) => n.id))).map((n) => [n.properties["hostname"], n.services.join(","), n.actions.length]),
    [["h0", "", 0], ["h1", "", 1], ["h2", "y", 0]],
  );
});

test("node store - clusters stored before node groups are read and changed as they were", async (t) => {
  const kv = await openBucket(t.context.nc, "nodes_legacy_test");
  const old = Array.from({ length: 3 }, (_, i) => node("c5", `c5-${1000 + i}`, `h${i}`));
  // The layout before node groups: the nodes as created under one key, a changed node under its own.
  await putValue(kv, "c5.created", old);
  await putValue(kv, "c5.c5-1001", { ...old[1]!, services: ["own"] });
  const store = createNodeStore(kv);
  const ids = old.map((n) => n.id);
  t.deepEqual((await store.getMany("c5", ids)).map((n) => n.services.join(",")), ["", "own", ""]);
  await store.modifyMany("c5", change("c5-1002", (n) => ({ ...n, services: ["new"] })));
  await store.modifyMany("c5", change("c5-1001", (n) => ({ ...n, services: [...n.services, "more"] })));
  t.deepEqual((await listKeys(kv, "c5.>")).sort(), ["c5.c5-1001", "c5.c5-1002", "c5.created"], "no group appears");
  t.deepEqual((await createNodeStore(kv).getMany("c5", ids)).map((n) => n.services.join(",")), ["", "own,more", "new"]);
});

test("dispatch memory - nodes are trusted only while every result count move was this process's", (t) => {
  const memory = new DispatchMemory();
  const plan = { clusterId: "c1", id: "c1-001" };
  const cluster = { id: "c1" } as ClusterRecord;
  t.is(memory.get(plan), undefined);
  memory.remember(plan, { cluster, credentials: {}, nodesCurrentAt: 0 });
  memory.resultsApplied(plan, 0, 3);
  memory.resultsApplied(plan, 3, 5);
  t.is(memory.get(plan)?.nodesCurrentAt, 5);
  // A move that started elsewhere (5 -> 7 was another instance's): nodes must be read again.
  memory.resultsApplied(plan, 7, 8);
  t.is(memory.get(plan)?.nodesCurrentAt, undefined);
  t.is(memory.get(plan)?.cluster, cluster, "the cluster and provider fields stay right for the whole plan");
  memory.resultsApplied(plan, 8, 9);
  t.is(memory.get(plan)?.nodesCurrentAt, undefined, "and stays unknown until a read");
  memory.forget(plan);
  t.is(memory.get(plan), undefined);
});

test("usage store - concurrent reservations, decided together, never exceed the quotas and keep arrival order", async (t) => {
  const usage = await openUsageStore(t.context.nc);
  const tenant = { name: "quota-group", workers: 0, maxClusters: 7, maxNodes: 30 } as Tenant;
  // 20 at once: some wait while the first write is in flight and are then decided in one write.
  const sizes = Array.from({ length: 20 }, (_, i) => 1 + (i % 6));
  const outcomes = await Promise.allSettled(sizes.map((n) => usage.reserve(tenant, n)));
  const accepted = sizes.filter((_, i) => outcomes[i]?.status === "fulfilled");
  const used = await usage.get(tenant.name);
  t.deepEqual(used, { clusters: accepted.length, nodes: accepted.reduce((a, b) => a + b, 0) });
  t.true(used.clusters <= 7 && used.nodes <= 30, JSON.stringify(used));
  t.true(used.clusters >= 5, "the quota is filled, not refused wholesale");
  for (const o of outcomes) {
    if (o.status === "rejected") t.like(o.reason, { status: 409, code: "quota_exceeded" });
  }
  // The first request was never refused: arrival order decides.
  t.is(outcomes[0]?.status, "fulfilled");
  await usage.release(tenant.name, sizes[0]!);
  t.is((await usage.get(tenant.name)).clusters, used.clusters - 1);
});

test("cluster store - counts by status follow creates, changes and removals without scanning", async (t) => {
  const kv = await openBucket(t.context.nc, "clusters_counts_test");
  const store = await openClusterStore(kv, silentLogger);
  t.teardown(() => store.stop());
  // Only the status (the actor's state) matters to the counts.
  const record = (id: string, status: string) => ({ id, actor: { value: status } }) as unknown as ClusterRecord;
  await store.create(record("k1", "pending"));
  await store.create(record("k2", "pending"));
  await store.create(record("k3", "active"));
  await store.all(); // the mirror has caught up
  t.deepEqual(Object.fromEntries(store.countsByStatus()), { pending: 2, active: 1 });
  await store.modify("k1", (c) => ({ put: { ...c!.value, actor: { ...c!.value.actor, value: "active" } } }));
  await store.modify("k2", (c) => ({ put: { ...c!.value, actor: { ...c!.value.actor, value: "incomplete" } } }));
  await store.remove("k3");
  await store.all();
  t.deepEqual(Object.fromEntries([...store.countsByStatus()].filter(([, n]) => n > 0)), { active: 1, incomplete: 1 });
});

test("plan store - a small plan keeps its tasks in its record (no pages), a large one in pages; both read the same", async (t) => {
  const plans = await openBucket(t.context.nc, "plans_inline_test");
  const pages = await openBucket(t.context.nc, "plan_tasks_inline_test");
  const store = createPlanStore(plans, pages);
  const stagesOf = (sizes: number[]): StoredTask[][] =>
    sizes.map((size, stage) => Array.from({ length: size }, (_, i) => ({ taskName: TaskName.Bootstrap, nodeId: `n${stage}-${i}`, service: "" })));
  const recordOf = (id: string, stages: StoredTask[][], inline: boolean): PlanRecord =>
    ({
      id,
      clusterId: "c1",
      tenant: "t",
      action: "CLUSTER_CREATE",
      createTime: 0,
      stageSizes: stages.map((s) => s.length),
      actor: { machine: "plan@1", value: "running", context: {} },
      ...(inline ? { tasks: stages } : {}),
    }) as unknown as PlanRecord;

  const small = stagesOf([5, 5, 5]);
  await store.create(recordOf("c1-001", small, true), small);
  const large = stagesOf([INLINE_PLAN_TASKS, 1]);
  await store.create(recordOf("c1-002", large, false), large);
  t.deepEqual((await listKeys(pages, ">")).sort(), ["c1.c1-002.0.0", "c1.c1-002.1.0"], "pages only for the large plan");

  // Read back by another process (nothing cached): the stored record carries the small plan's tasks.
  const reader = createPlanStore(plans, pages);
  for (const [id, stages] of [["c1-001", small], ["c1-002", large]] as const) {
    const plan = (await reader.get("c1", id))!.value;
    t.deepEqual(await Promise.all(stages.map((_, s) => reader.stageTasks(plan, s))), stages);
    t.deepEqual(await reader.stageTask(plan, 1, 0), stages[1]![0]);
    t.is(await reader.stageTask(plan, 1, 99), undefined);
  }
});

test("node store - putAdded joins a small cluster's group, replaces a node of the same id, and moves a full group apart", async (t) => {
  const kv = await openBucket(t.context.nc, "nodes_added_test");
  const mine = createNodeStore(kv);
  await mine.putNew("c6", [node("c6", "c6-1000", "a"), node("c6", "c6-1001", "b")]);
  await mine.putAdded("c6", [node("c6", "c6-1002", "c"), node("c6", "c6-1003", "d")]);
  t.deepEqual(await listKeys(kv, "c6.>"), ["c6.nodes"], "still one key");
  // A retried job writes the same new ids again: they replace the first copies.
  await mine.putAdded("c6", [node("c6", "c6-1003", "d2")]);
  const ids = ["c6-1000", "c6-1001", "c6-1002", "c6-1003"];
  t.deepEqual(hostnames(await createNodeStore(kv).getMany("c6", ids)), ["a", "b", "c", "d2"]);
  t.is((await readValue<{ nodes: ClusterNode[] }>(kv, "c6.nodes"))?.value.nodes.length, 4, "no node twice");

  // Past GROUPED_NODES the group moves apart, the new nodes with it.
  const more = Array.from({ length: GROUPED_NODES }, (_, i) => node("c6", `c6-${1004 + i}`, `m${i}`));
  await createNodeStore(kv).putAdded("c6", more);
  t.deepEqual((await readValue(kv, "c6.nodes"))?.value, { moved: true });
  const all = [...ids, ...more.map((n) => n.id)];
  t.is((await listKeys(kv, "c6.>")).length, all.length + 1, "a key per node, and the group's mark");
  t.deepEqual(hostnames(await createNodeStore(kv).getMany("c6", all)), ["a", "b", "c", "d2", ...more.map((n) => n.properties["hostname"])]);

  // A cluster already apart: a key per new node.
  await mine.putAdded("c6", [node("c6", "c6-2000", "z")]);
  t.like(await readValue(kv, "c6.c6-2000"), { value: { properties: { hostname: "z" } } });
  t.like(await createNodeStore(kv).get("c6", "c6-2000"), { properties: { hostname: "z" } });
});
