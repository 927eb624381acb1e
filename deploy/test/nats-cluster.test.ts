import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import test from "ava";
import { isProcessAlive as isAlive } from "@corral/deploy";
import { eventually } from "../../test/helpers/eventually.js";
import { startNatsCluster } from "../../test/helpers/nats-cluster.js";

interface Jsz {
  meta_cluster?: { cluster_size?: number };
}

test("nats cluster - three routed JetStream nodes; a killed node restarts on its ports with its store", async (t) => {
  const cluster = await startNatsCluster({ nodes: 3 });
  const pids = [0, 1, 2].map((i) => cluster.node(i).pid);
  try {
    t.is(cluster.urls.length, 3);
    t.is(cluster.url, cluster.urls.join(","));
    const jsz = (await (await fetch(`${cluster.node(2).monitorUrl}/jsz`)).json()) as Jsz;
    t.is(jsz.meta_cluster?.cluster_size, 3, "every node sees a three-node JetStream meta group");

    const nc = await connect({ servers: cluster.urls[1] });
    try {
      const kv = await new Kvm(nc).create("cluster_test", { replicas: 3 });
      // A just-created stream's interest may not have reached this node over the routes yet.
      await eventually(() => kv.put("before", "1"), { what: "the first write", timeoutMs: 5_000 });
      const oldPort = cluster.node(0).port;
      await cluster.killNode(0);
      t.false(isAlive(pids[0] ?? -1), "killNode SIGKILLs the process");
      // The stream may have lost its leader with the node: writes resume once the others elect one.
      const started = Date.now();
      await eventually(() => kv.put("while-down", "2"), { what: "a write after the kill", timeoutMs: 15_000, intervalMs: 100 });
      t.log(`writes resumed ${Date.now() - started} ms after the kill`);
      await cluster.restartNode(0);
      t.is(cluster.node(0).port, oldPort, "the node comes back on its client port");
      t.not(cluster.node(0).pid, pids[0]);
    } finally {
      await nc.close();
    }

    // Straight to the restarted node: it kept its store and caught up with the write it missed.
    const direct = await connect({ servers: cluster.urls[0] });
    try {
      const kv = await new Kvm(direct).open("cluster_test");
      t.is((await kv.get("before"))?.string(), "1");
      t.is((await kv.get("while-down"))?.string(), "2");
      const status = await kv.status();
      t.is(status.replicas, 3);
    } finally {
      await direct.close();
    }
  } finally {
    await Promise.all([cluster.stop(), cluster.stop()]);
  }
  t.false([0, 1, 2].some((i) => isAlive(cluster.node(i).pid)), "stop() leaves no node running");
});
