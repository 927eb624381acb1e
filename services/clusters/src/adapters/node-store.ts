import { kvKey } from "@corral/contracts";
import {
  modifyValue,
  purgeKeys,
  putValue,
  readValue,
  RevisionCache,
  type KV,
  type Modification,
  type Versioned,
} from "@corral/shared";
import type { ClusterNode } from "../domain/records.js";
import { mapLimit } from "./buckets.js";

const CONCURRENCY = 256;

/** Nodes, one key per node (`<cluster>.<node>`), so results for different nodes never contend. */
export interface NodeStore {
  get(clusterId: string, nodeId: string): Promise<ClusterNode | undefined>;
  /** The nodes with these ids, in that order (missing ones skipped). */
  getMany(clusterId: string, nodeIds: readonly string[]): Promise<ClusterNode[]>;
  /** The last versions this process wrote or read, when it has all of them (may be behind: see callers). */
  cachedMany(clusterId: string, nodeIds: readonly string[]): ClusterNode[] | undefined;
  putMany(nodes: readonly ClusterNode[]): Promise<void>;
  modify(
    clusterId: string,
    nodeId: string,
    fn: (current: Versioned<ClusterNode> | undefined) => Modification<ClusterNode>,
  ): Promise<ClusterNode | undefined>;
  /** Removes every node of a cluster with its history (tenant deletion). */
  removeCluster(clusterId: string): Promise<void>;
}

export function createNodeStore(kv: KV): NodeStore {
  // Results modify a node the moment after this process wrote it: the compare-and-set needs no read first.
  const cache = new RevisionCache(50_000, 64 * 1024 * 1024);
  const get = async (clusterId: string, nodeId: string) =>
    (await readValue<ClusterNode>(kv, kvKey(clusterId, nodeId), cache))?.value;
  return {
    get,
    async getMany(clusterId, nodeIds) {
      const nodes = await mapLimit(nodeIds, CONCURRENCY, (id) => get(clusterId, id));
      return nodes.filter((n): n is ClusterNode => n !== undefined);
    },
    cachedMany(clusterId, nodeIds) {
      const nodes: ClusterNode[] = [];
      for (const id of nodeIds) {
        const found = cache.peek<ClusterNode>(kvKey(clusterId, id));
        if (!found) return undefined;
        nodes.push(found.value);
      }
      return nodes;
    },
    async putMany(nodes) {
      await mapLimit(nodes, CONCURRENCY, (n) => putValue(kv, kvKey(n.clusterId, n.id), n, cache));
    },
    async modify(clusterId, nodeId, fn) {
      return (await modifyValue<ClusterNode>(kv, kvKey(clusterId, nodeId), fn, { cache })).value;
    },
    async removeCluster(clusterId) {
      await purgeKeys(kv, `${kvKey(clusterId)}.>`);
    },
  };
}
