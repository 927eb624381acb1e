/**
 * Whether anything was written where the clusters service keeps its state: the last sequence of each of its
 * buckets' streams and of the task, result and event streams. Equal sequences before and after a request mean
 * the request wrote nothing there: no record, node, plan, counter, credential, usage, task or event (a write of
 * an unchanged value or a delete moves a sequence too).
 */
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, kvStream, streams } from "@corral/contracts";
import { eventually } from "./eventually.js";

const CLUSTER_STATE_STREAMS = [
  ...[buckets.clusters, buckets.nodes, buckets.plans, buckets.planTasks, buckets.counters, buckets.credentials, buckets.usage].map(kvStream),
  streams.tasks,
  streams.results,
  streams.events,
];

/** Stream name -> its last sequence. */
export type StoreSequences = Record<string, number>;

export async function clusterStateSequences(nc: NatsConnection): Promise<StoreSequences> {
  const jsm = await jetstreamManager(nc);
  const entries = await Promise.all(
    CLUSTER_STATE_STREAMS.map(async (name) => [name, (await jsm.streams.info(name)).state.last_seq] as const),
  );
  return Object.fromEntries(entries);
}

/** The sequences once nothing has been written for `quietMs` (the trailing writes of a job that just ended). */
export async function settledClusterStateSequences(nc: NatsConnection, quietMs = 300): Promise<StoreSequences> {
  let last = await clusterStateSequences(nc);
  return eventually(
    async () => {
      const now = await clusterStateSequences(nc);
      const same = JSON.stringify(now) === JSON.stringify(last);
      last = now;
      return same ? now : false;
    },
    { what: "the clusters service's stores to stay unwritten", timeoutMs: 10_000, intervalMs: quietMs },
  );
}
