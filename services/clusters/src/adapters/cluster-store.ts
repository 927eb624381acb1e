import { decode, fromKeyToken, kvKey } from "@corral/contracts";
import {
  createValue,
  modifyValue,
  readValue,
  RevisionCache,
  type KV,
  type Logger,
  type Modification,
  type Versioned,
} from "@corral/shared";
import { statusOf } from "../domain/cluster-status.js";
import type { ClusterRecord } from "../domain/records.js";

/** Reads of cluster records: what every layer may do (only the actors write them: {@link ClusterStore}). */
export interface ClusterReader {
  get(id: string): Promise<Versioned<ClusterRecord> | undefined>;
  /** A version that may be behind, for what never changes after creation (owner, tenant, node count). */
  fixedPartsOf(id: string): Promise<ClusterRecord | undefined>;
  /** Every cluster, as of a read that includes every write acknowledged before it started. */
  all(): Promise<ClusterRecord[]>;
  /** How many clusters the mirror holds in each status (kept as it changes: no scan). */
  countsByStatus(): ReadonlyMap<string, number>;
}

/** Cluster records, plus an in-memory mirror fed by a KV watch for lists and periodic scans. */
export interface ClusterStore extends ClusterReader {
  /** False when the id is taken. */
  create(record: ClusterRecord): Promise<boolean>;
  modify(
    id: string,
    fn: (current: Versioned<ClusterRecord> | undefined) => Modification<ClusterRecord>,
  ): Promise<ClusterRecord | undefined>;
  /** Removes a cluster record with its history (tenant deletion); the mirror learns it through the watch. */
  remove(id: string): Promise<void>;
  /** Ends the mirror's watch. */
  stop(): void;
}

export async function openClusterStore(kv: KV, log: Logger): Promise<ClusterStore> {
  const mirror = new Map<string, ClusterRecord>();
  const byStatus = new Map<string, number>();
  const count = (record: ClusterRecord | undefined, by: number) => {
    if (record) byStatus.set(statusOf(record), (byStatus.get(statusOf(record)) ?? 0) + by);
  };
  const cache = new RevisionCache(10_000);
  let applied = 0;
  const waiters: Array<{ revision: number; resolve: () => void }> = [];
  const watcher = await kv.watch({ key: ">" });
  void (async () => {
    for await (const e of watcher) {
      const id = fromKeyToken(e.key);
      count(mirror.get(id), -1);
      if (e.operation === "PUT") {
        const record = decode<ClusterRecord>(e.value);
        mirror.set(id, record);
        count(record, 1);
      } else mirror.delete(id);
      applied = Math.max(applied, e.revision);
      for (let i = waiters.length - 1; i >= 0; i--) {
        const w = waiters[i];
        if (w && w.revision <= applied) {
          waiters.splice(i, 1);
          w.resolve();
        }
      }
    }
  })().catch((err: unknown) => log.error("cluster watch ended", { err }));

  const caughtUp = async () => {
    const target = (await kv.status()).streamInfo.state.last_seq;
    if (target > applied) await new Promise<void>((resolve) => waiters.push({ revision: target, resolve }));
  };

  return {
    get: (id) => readValue<ClusterRecord>(kv, kvKey(id), cache),
    async fixedPartsOf(id) {
      return cache.peek<ClusterRecord>(kvKey(id))?.value ?? mirror.get(id) ?? (await readValue<ClusterRecord>(kv, kvKey(id), cache))?.value;
    },
    async create(record) {
      return (await createValue(kv, kvKey(record.id), record, cache)) !== undefined;
    },
    async modify(id, fn) {
      return (await modifyValue<ClusterRecord>(kv, kvKey(id), fn, { cache })).value;
    },
    async remove(id) {
      cache.forget(kvKey(id));
      await kv.purge(kvKey(id));
    },
    async all() {
      await caughtUp();
      return [...mirror.values()];
    },
    countsByStatus: () => byStatus,
    stop() {
      watcher.stop();
    },
  };
}
