import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { buckets, kvStream, objectStores, objectStoreStream, streams } from "@corral/contracts";

/** Replicas of Corral's state in a NATS cluster of at least this many servers (one may fail, a majority remains). */
export const CLUSTER_REPLICAS = 3;

/** `nats.replicas` of each connection that was given one (connectNats); absent or 0: decided from the servers. */
const configured = new WeakMap<NatsConnection, number>();

/** Records the `nats.replicas` setting for what this connection creates and migrates; 0: automatic. */
export function setStoreReplicas(nc: NatsConnection, replicas: number): void {
  if (!Number.isInteger(replicas) || replicas < 0 || replicas > 5) {
    throw new Error(`nats.replicas must be 0 (automatic) or a replica count from 1 to 5, got ${replicas}`);
  }
  configured.set(nc, replicas);
}

/**
 * How many servers the connected nats-server's cluster has, as the server itself tells its clients: a lone server
 * sends no `cluster` in its INFO; a cluster member sends the client URLs of every member (`connect_urls`, kept
 * current as members come and go). A cluster whose servers do not advertise (`no_advertise`) counts as one: set
 * `nats.replicas` there.
 */
export function natsServerCount(nc: NatsConnection): number {
  const info = nc.info;
  if (!info?.cluster) return 1;
  return Math.max(1, new Set(info.connect_urls ?? []).size);
}

/** The replica count of every stream, KV bucket and object store this connection creates. */
export function storeReplicas(nc: NatsConnection): number {
  const setting = configured.get(nc) ?? 0;
  if (setting > 0) return setting;
  return natsServerCount(nc) >= CLUSTER_REPLICAS ? CLUSTER_REPLICAS : 1;
}

/** Every stream Corral keeps state in: the task protocol's, and those behind its buckets and object stores. */
export function corralStreamNames(): string[] {
  return [...Object.values(streams), ...Object.values(buckets).map(kvStream), ...Object.values(objectStores).map(objectStoreStream)];
}

/**
 * The count a stream at `current` replicas is migrated to, or undefined to leave it: `wanted`, except that the
 * automatic setting (not `explicit`) never lowers a count.
 */
export function replicaTarget(current: number, wanted: number, explicit: boolean): number | undefined {
  if (current === wanted || (!explicit && current > wanted)) return undefined;
  return wanted;
}

/** A stream whose replica count {@link migrateStoreReplicas} changed, or failed to. */
export interface ReplicaChange {
  stream: string;
  from: number;
  to: number;
  /** Why the server refused (e.g. too few servers up to place the new replicas); the stream kept `from`. */
  error?: string;
}

/**
 * Brings every existing Corral stream to {@link storeReplicas} with a stream update of `num_replicas` (JetStream
 * copies the data to the new peers itself, or drops peers). The automatic setting only ever raises a count: a
 * cluster seen while a server is down must not shrink its streams; an explicit `nats.replicas` is applied either
 * way. A refused update is reported, not thrown: the stream keeps working at its old count.
 */
export async function migrateStoreReplicas(nc: NatsConnection): Promise<ReplicaChange[]> {
  const wanted = storeReplicas(nc);
  const explicit = (configured.get(nc) ?? 0) > 0;
  const ours = new Set(corralStreamNames());
  const jsm = await jetstreamManager(nc);
  const changes: ReplicaChange[] = [];
  for await (const info of jsm.streams.list()) {
    const { config } = info;
    const from = config.num_replicas;
    const to = replicaTarget(from, wanted, explicit);
    if (!ours.has(config.name) || to === undefined) continue;
    try {
      await jsm.streams.update(config.name, { ...config, num_replicas: to });
      changes.push({ stream: config.name, from, to });
    } catch (err) {
      changes.push({ stream: config.name, from, to, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return changes;
}
