import anyTest, { type TestFn } from "ava";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { ASSIGNMENT_KEY, buckets, encode, kvKey, kvStream, objectStores, objectStoreStream, streams } from "@corral/contracts";
import { startNats } from "../../test/helpers/servers.js";
import { eventually } from "../../test/helpers/eventually.js";
import { startNatsCluster, type NatsClusterHandle } from "../../test/helpers/nats-cluster.js";
import { connectNats } from "../src/nats.js";
import { ensureStreams } from "../src/tasks.js";
import { deleteValue, openBucket, readBytes, readValue, putValue } from "../src/kv.js";
import { openAssignmentReader } from "../src/assignments.js";
import { openActiveSetReader } from "../src/active-sets.js";
import { openObjectStore } from "../src/object-stores.js";
import { migrateStoreReplicas, natsServerCount, replicaTarget, storeReplicas } from "../src/replicas.js";

const test = anyTest as TestFn<{ cluster: NatsClusterHandle }>;

test.before(async (t) => {
  t.context.cluster = await startNatsCluster({ nodes: 3 });
});
test.after.always(async (t) => {
  await t.context.cluster?.stop();
});

async function withConnection<T>(url: string, replicas: number | undefined, use: (nc: NatsConnection) => Promise<T>): Promise<T> {
  const nc = await connectNats({ url, name: "replicas-test", ...(replicas === undefined ? {} : { replicas }) });
  try {
    return await use(nc);
  } finally {
    await nc.close();
  }
}

async function replicasOf(nc: NatsConnection, stream: string): Promise<number> {
  return (await (await jetstreamManager(nc)).streams.info(stream)).config.num_replicas;
}

test.serial("replicas - a lone server gets 1, a three-node cluster 3, on streams, buckets and object stores", async (t) => {
  const lone = await startNats({ jetstream: true, syncAlways: false });
  try {
    await withConnection(lone.url, undefined, async (nc) => {
      t.is(natsServerCount(nc), 1);
      t.is(storeReplicas(nc), 1);
      await ensureStreams(nc);
      t.is(await replicasOf(nc, streams.tasks), 1);
    });
  } finally {
    await lone.stop();
  }

  await withConnection(t.context.cluster.url, undefined, async (nc) => {
    t.is(natsServerCount(nc), 3, "the server's INFO names all three nodes");
    t.is(storeReplicas(nc), 3);
    await ensureStreams(nc);
    await openBucket(nc, buckets.plans);
    await openObjectStore(nc, objectStores.uploads);
    for (const stream of [streams.tasks, streams.events, kvStream(buckets.plans), objectStoreStream(objectStores.uploads)]) {
      t.is(await replicasOf(nc, stream), 3, stream);
    }
  });
});

test.serial("replicas - state made at R1 in the cluster is migrated to R3 with its data; an explicit nats.replicas applies either way", async (t) => {
  await withConnection(t.context.cluster.url, 1, async (nc) => {
    const kv = await openBucket(nc, buckets.counters);
    await putValue(kv, "kept", { n: 42 });
    t.is(await replicasOf(nc, kvStream(buckets.counters)), 1);
  });
  await withConnection(t.context.cluster.url, undefined, async (nc) => {
    const changes = await migrateStoreReplicas(nc);
    t.deepEqual(
      changes.filter((c) => c.stream === kvStream(buckets.counters)),
      [{ stream: kvStream(buckets.counters), from: 1, to: 3 }],
    );
    t.is(await replicasOf(nc, kvStream(buckets.counters)), 3);
    const jsm = await jetstreamManager(nc);
    const peers = await eventually(
      async () => {
        const { cluster } = await jsm.streams.info(kvStream(buckets.counters));
        return cluster?.replicas?.length === 2 && cluster.replicas.every((r) => r.current) && cluster;
      },
      { what: "a leader and two current peers holding the bucket", timeoutMs: 10_000 },
    );
    t.truthy(peers.leader);
    t.deepEqual((await readValue(await openBucket(nc, buckets.counters), "kept"))?.value, { n: 42 });
    t.deepEqual(await migrateStoreReplicas(nc), [], "nothing left to migrate");
  });
  // Automatic mode only raises counts; nats.replicas set explicitly also lowers them.
  await withConnection(t.context.cluster.urls[0] ?? "", 1, async (nc) => {
    const changes = await migrateStoreReplicas(nc);
    t.true(changes.some((c) => c.stream === kvStream(buckets.counters) && c.to === 1), "an explicit setting is applied");
    t.is(await replicasOf(nc, kvStream(buckets.counters)), 1);
    t.deepEqual((await readValue(await openBucket(nc, buckets.counters), "kept"))?.value, { n: 42 });
  });
});

test("replicas - the automatic setting only raises a stream's count; an explicit one sets it either way", (t) => {
  t.is(replicaTarget(1, 3, false), 3);
  t.is(replicaTarget(3, 1, false), undefined, "a cluster seen with a node down does not shrink its streams");
  t.is(replicaTarget(3, 1, true), 1);
  t.is(replicaTarget(3, 3, true), undefined);
});

/** The entry with its bytes as a plain Uint8Array (reads answer Buffers), for deepEqual. */
const plain = (entry: { value: Uint8Array; revision: number } | undefined) => entry && { ...entry, value: new Uint8Array(entry.value) };

/**
 * Counts the get requests for `stream` that reach the server: the leader's (`STREAM.MSG.GET`) and direct ones (any
 * replica answers those, a lagging one with what was there before).
 */
async function countGets(nc: NatsConnection, stream: string): Promise<{ leader: () => number; direct: () => number }> {
  let leader = 0;
  let direct = 0;
  nc.subscribe(`$JS.API.STREAM.MSG.GET.${stream}`, { callback: () => void leader++ });
  for (const subject of [`$JS.API.DIRECT.GET.${stream}`, `$JS.API.DIRECT.GET.${stream}.>`]) {
    nc.subscribe(subject, { callback: () => void direct++ });
  }
  await nc.flush();
  return { leader: () => leader, direct: () => direct };
}

/** Connections to the first and the last node of the cluster: one writes, the other reads. */
function withTwoNodes(cluster: NatsClusterHandle, use: (writer: NatsConnection, reader: NatsConnection) => Promise<void>): Promise<void> {
  const { urls } = cluster;
  return withConnection(urls[0]!, undefined, (writer) => withConnection(urls[urls.length - 1]!, undefined, (reader) => use(writer, reader)));
}

test.serial("reads on a cluster come from the stream leader: every write is read back at once from any node, deletes and purges included", async (t) => {
  await withTwoNodes(t.context.cluster, async (writer, reader) => {
    const name = `corral_leader_reads_${Date.now()}`;
    const writes = await openBucket(writer, name);
    const reads = await openBucket(reader, name);
    const gets = await countGets(writer, kvStream(name));
    for (let i = 0; i < 100; i++) {
      const revision = await putValue(writes, "k", { i });
      const read = await readValue<{ i: number }>(reads, "k");
      t.deepEqual(read, { value: { i }, revision }, `write ${i} read back from another node`);
      t.deepEqual(plain(await readBytes(reads, "k")), { value: new Uint8Array(encode({ i })), revision }, `write ${i} read back undecoded`);
    }
    t.true(await deleteValue(writes, "k"));
    t.is(await readValue(reads, "k"), undefined, "a delete (KV-Operation DEL) is read as no value");
    t.is(await readBytes(reads, "k"), undefined, "a delete, undecoded");
    await putValue(writes, "p", { p: 1 });
    await writes.purge("p");
    t.is(await readBytes(reads, "p"), undefined, "a purged key (KV-Operation PURGE)");
    t.is(await readValue(reads, "never-written"), undefined);
    await writer.flush();
    await eventually(() => gets.leader() >= 204, { what: `a leader get per read (${gets.leader()} seen)` });
    t.is(gets.direct(), 0, "no direct gets");
    await (await jetstreamManager(writer)).streams.delete(kvStream(name));
  });
});

test.serial("the provisioner's readers of the worker assignment and the active plugin sets ask the leader on a cluster", async (t) => {
  await withTwoNodes(t.context.cluster, async (writer, reader) => {
    const assignments = await countGets(writer, kvStream(buckets.assignments));
    const active = await countGets(writer, kvStream(buckets.pluginActive));
    const assignmentKv = await openBucket(writer, buckets.assignments);
    const activeKv = await openBucket(writer, buckets.pluginActive);
    const assignmentReader = await openAssignmentReader(reader);
    const activeReader = await openActiveSetReader(reader);
    for (let generation = 1; generation <= 5; generation++) {
      await putValue(assignmentKv, ASSIGNMENT_KEY, { generation });
      await putValue(activeKv, kvKey("acme"), { tenant: "acme", generation });
      t.deepEqual(new Uint8Array((await assignmentReader.get()) ?? []), new Uint8Array(encode({ generation })));
      t.deepEqual(await activeReader.get("acme"), { tenant: "acme", generation });
    }
    await writer.flush();
    await eventually(() => assignments.leader() >= 5 && active.leader() >= 5, { what: "leader gets of the assignment and active set" });
    t.is(assignments.direct() + active.direct(), 0, "no direct gets");
  });
});

test.serial("readBytes on a lone server reads by direct get", async (t) => {
  const lone = await startNats({ jetstream: true, syncAlways: false });
  try {
    await withConnection(lone.url, undefined, async (nc) => {
      const kv = await openBucket(nc, buckets.counters);
      const gets = await countGets(nc, kvStream(buckets.counters));
      const revision = await putValue(kv, "k", { n: 1 });
      t.deepEqual(plain(await readBytes(kv, "k")), { value: new Uint8Array(encode({ n: 1 })), revision });
      t.true(await deleteValue(kv, "k"));
      t.is(await readBytes(kv, "k"), undefined);
      await nc.flush();
      await eventually(() => gets.direct() >= 2, { what: `a direct get per read (${gets.direct()} seen)` });
      t.is(gets.leader(), 0);
    });
  } finally {
    await lone.stop();
  }
});
