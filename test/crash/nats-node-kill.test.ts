/**
 * One node of a three-node JetStream cluster dies (SIGKILL) under a client at replicas 3: the client reconnects to
 * another node, the streams elect new leaders among the two left, and KV reads, compare-and-set writes and task
 * publishes go on, with nothing stored before the kill lost.
 */
import test from "ava";
import { jetstreamManager } from "@nats-io/jetstream";
import { buckets, encode, streams, taskSubject, taskMessageId } from "@corral/contracts";
import { connectNats, createValue, ensureStreams, jsRequests, openBucket, putValue, readValue, storeReplicas } from "@corral/shared";
import { eventually } from "../helpers/eventually.js";
import { startNatsCluster } from "../helpers/nats-cluster.js";

/** New stream leaders are elected within seconds; the bound leaves room for a loaded CI machine. */
const RECOVERY_MS = 20_000;

test("nats node kill - at R3 KV reads, writes and task publishes go on through the reconnect to another node", async (t) => {
  const cluster = await startNatsCluster({ nodes: 3 });
  const nc = await connectNats({ url: cluster.url, name: "node-kill-test" });
  try {
    t.is(storeReplicas(nc), 3);
    await ensureStreams(nc);
    const kv = await openBucket(nc, buckets.counters);
    const js = jsRequests(nc);
    const tenant = "node-kill";
    const publishTask = (n: number) => js.publish(taskSubject(tenant), encode({ n }), { msgId: taskMessageId(`task-${n}`, 1) });
    await eventually(() => createValue(kv, "before", { n: 0 }), { what: "the first write", timeoutMs: 5_000 });
    await publishTask(1);

    const connectedPort = nc.info?.port;
    const victim = cluster.urls.findIndex((u) => new URL(u).port === String(connectedPort));
    t.true(victim >= 0, "the client's node is one of the cluster's");
    const killedAt = Date.now();
    await cluster.killNode(victim);

    // A plain write: retried after an error whose write may still have landed, it lands the same.
    await eventually(() => putValue(kv, "after", { n: 1 }), { what: "a write after the kill", timeoutMs: RECOVERY_MS, intervalMs: 100 });
    const writesBack = Date.now() - killedAt;
    await eventually(() => publishTask(2), { what: "a task publish after the kill", timeoutMs: RECOVERY_MS, intervalMs: 100 });
    t.log(`writes back ${writesBack} ms, task publishes ${Date.now() - killedAt} ms after the kill`);
    t.not(nc.info?.port, connectedPort, "the client now talks to another node");

    t.deepEqual((await readValue(kv, "before"))?.value, { n: 0 }, "what was written before the kill is there");
    t.deepEqual((await readValue(kv, "after"))?.value, { n: 1 });
    t.truthy(await createValue(kv, "compare-and-set", { n: 2 }), "a compare-and-set write goes through");
    await publishTask(3);
    // The JetStream API (unlike the data path) may time out until the meta group has its leader again.
    const tasks = await eventually(async () => (await jetstreamManager(nc)).streams.info(streams.tasks), {
      what: "the task stream's info",
      timeoutMs: RECOVERY_MS,
    });
    t.is(tasks.state.messages, 3, "every task published is stored once");
    t.is(tasks.config.num_replicas, 3);
  } finally {
    await nc.close();
    await cluster.stop();
  }
});
