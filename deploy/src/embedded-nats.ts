import { join } from "node:path";
import { startNatsCluster } from "./nats-cluster.js";
import { isPortFree } from "./ports.js";
import type { NatsOptions, ServerHandle } from "./servers.js";
import { startNats } from "./servers.js";

/** Options of {@link startEmbeddedNats}: those of one server, with `port` the first node's preferred port. */
export interface EmbeddedNatsOptions extends Omit<NatsOptions, "jetstream" | "storeDir" | "cluster"> {
  /** 1: a lone nats-server; more: a loopback JetStream cluster of that many (`nats.embedded.nodes`). */
  nodes: number;
  /** The launcher's data directory: the store is `<dataDir>/nats` alone, `<dataDir>/nats-cluster/node-<i>` in a cluster. */
  dataDir: string;
}

/** Where a cluster keeps its nodes' stores: apart from a lone server's, whose streams a cluster node would not adopt. */
export const clusterStoreDir = (dataDir: string) => join(dataDir, "nats-cluster");

/**
 * The launcher's JetStream: one nats-server, or a cluster of `nodes` on ports `port`, `port + 1`, ... (each taken
 * one: any free port). Either way one handle: `url` lists every node (comma separated), `stop` stops them all,
 * `port` and `pid` are the first node's. A cluster node that dies is started again on its ports and store (the
 * others serve meanwhile; `onProgress` hears of it); `exited` settles when the lone server exits, or when a
 * cluster node cannot be started again.
 */
export async function startEmbeddedNats(opts: EmbeddedNatsOptions): Promise<ServerHandle> {
  const { nodes, dataDir, port, ...common } = opts;
  const ports = await Promise.all(
    Array.from({ length: nodes }, async (_, i) => (port !== undefined && (await isPortFree(port + i)) ? port + i : undefined)),
  );
  if (nodes === 1) {
    return startNats({ ...common, port: ports[0], jetstream: true, storeDir: join(dataDir, "nats") });
  }
  const cluster = await startNatsCluster({ ...common, nodes, ports, storeDir: clusterStoreDir(dataDir) });
  let stopping = false;
  const exited = new Promise<void>((resolve) => {
    const restartWhenDead = (i: number): void => {
      const node = cluster.node(i);
      void node.exited.then(async () => {
        if (stopping) return;
        opts.onProgress?.(`nats-server n${i} (pid ${node.pid}) died; starting it again on its ports and store`);
        try {
          await cluster.restartNode(i);
        } catch (err) {
          opts.onProgress?.(`nats-server n${i} did not start again: ${(err as Error).message}`);
          resolve();
          return;
        }
        opts.onProgress?.(`nats-server n${i} is back (pid ${cluster.node(i).pid})`);
        restartWhenDead(i);
      });
    };
    for (let i = 0; i < nodes; i++) restartWhenDead(i);
  });
  const stop = async (): Promise<void> => {
    stopping = true;
    await cluster.stop();
  };
  const first = cluster.node(0);
  return { url: cluster.url, port: first.port, pid: first.pid, exited, stop, [Symbol.asyncDispose]: stop };
}
