import { TaskName, type Tenant } from "@corral/contracts";
import { listKeys, openBucket, silentLogger } from "@corral/shared";
import { openClusterStore } from "../src/adapters/cluster-store.js";
import { createCounters } from "../src/adapters/counters.js";
import { createNodeStore, GROUPED_NEW_NODES } from "../src/adapters/node-store.js";
import { createPlanStore } from "../src/adapters/plan-store.js";
import { openUsageStore } from "../src/adapters/usage-store.js";
import { DispatchMemory } from "../src/engine/dispatch-memory.js";
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

test("node store - cachedMany serves only what this process wrote or read, and all of it or nothing", async (t) => {
  const kv = await openBucket(t.context.nc, "nodes_cache_test");
  const mine = createNodeStore(kv);
  const theirs = createNodeStore(kv);
  await mine.putNew("c1", [node("c1", "c1-1000", "a"), node("c1", "c1-1001", "b")]);
  t.deepEqual(mine.cachedMany("c1", ["c1-1000", "c1-1001"])?.map((n) => n.properties["hostname"]), ["a", "b"]);
  t.is(mine.cachedMany("c1", ["c1-1000", "c1-1002"]), undefined, "a node never seen: nothing");
  t.is(theirs.cachedMany("c1", ["c1-1000"]), undefined);
  // Another process changes a node: my cache is behind until a read or a compare-and-set tells it.
  await theirs.modify("c1", "c1-1000", (c) => ({ put: { ...c!.value, properties: { hostname: "a2" } } }));
  t.is(mine.cachedMany("c1", ["c1-1000"])?.[0]?.properties["hostname"], "a");
  await mine.modify("c1", "c1-1000", (c) => ({ put: { ...c!.value, services: ["x"] } }));
  t.like(mine.cachedMany("c1", ["c1-1000"])?.[0], { properties: { hostname: "a2" }, services: ["x"] });
});

test("node store - a small new cluster's nodes are one key until each node's first change; a large one's a key each", async (t) => {
  const kv = await openBucket(t.context.nc, "nodes_created_test");
  const mine = createNodeStore(kv);
  const small = Array.from({ length: 5 }, (_, i) => node("c2", `c2-${1000 + i}`, `h${i}`));
  await mine.putNew("c2", small);
  t.deepEqual((await listKeys(kv, "c2.>")).sort(), ["c2.created"], "one write for five nodes");

  // Another process reads them as created, and its first change of a node writes that node's own key.
  const theirs = createNodeStore(kv);
  t.deepEqual(await theirs.getMany("c2", small.map((n) => n.id)), small);
  t.like(await theirs.get("c2", "c2-1003"), { properties: { hostname: "h3" } });
  t.is(await theirs.get("c2", "c2-1009"), undefined);
  await theirs.modify("c2", "c2-1001", (c) => ({ put: { ...c!.value, services: ["x"] } }));
  // This process's guess (the node as created, revision 0) loses against that write and is decided again on a read.
  await mine.modify("c2", "c2-1001", (c) => ({ put: { ...c!.value, properties: { hostname: "h1b" } } }));
  t.like(await theirs.get("c2", "c2-1001"), { services: ["x"], properties: { hostname: "h1b" } }, "neither change lost");
  await mine.modify("c2", "c2-1002", (c) => ({ put: { ...c!.value, services: ["y"] } }));
  t.deepEqual((await listKeys(kv, "c2.>")).sort(), ["c2.c2-1001", "c2.c2-1002", "c2.created"]);
  t.deepEqual(
    (await createNodeStore(kv).getMany("c2", small.map((n) => n.id))).map((n) => [n.id, n.services.join(",")]),
    [["c2-1000", ""], ["c2-1001", "x"], ["c2-1002", "y"], ["c2-1003", ""], ["c2-1004", ""]],
  );

  const large = Array.from({ length: GROUPED_NEW_NODES + 1 }, (_, i) => node("c3", `c3-${1000 + i}`, `h${i}`));
  await mine.putNew("c3", large);
  t.is((await listKeys(kv, "c3.>")).length, large.length, "a key per node");
  await mine.removeCluster("c2");
  t.deepEqual(await listKeys(kv, "c2.>"), [], "removal takes the created nodes too");
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
