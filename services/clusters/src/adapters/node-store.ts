import { encode, kvKey } from "@corral/contracts";
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
/** A new cluster of up to this many nodes stores them under one key at first (`putNew`). */
export const GROUPED_NEW_NODES = 64;
/** The key of a small cluster's nodes as created; never a node id (those are `<cluster>-<number>`). */
const newNodesKey = (clusterId: string) => kvKey(clusterId, "created");

/**
 * Nodes, one key per node (`<cluster>.<node>`), so results for different nodes never contend. A small cluster's
 * nodes are created under one key (`<cluster>.created`: one write instead of one per node); a node's own key
 * appears with its first change, and wins from then on.
 */
export interface NodeStore {
  get(clusterId: string, nodeId: string): Promise<ClusterNode | undefined>;
  /** The nodes with these ids, in that order (missing ones skipped). */
  getMany(clusterId: string, nodeIds: readonly string[]): Promise<ClusterNode[]>;
  /** The last versions this process wrote or read, when it has all of them (may be behind: see callers). */
  cachedMany(clusterId: string, nodeIds: readonly string[]): ClusterNode[] | undefined;
  /** Stores the nodes of a new cluster (before the cluster record is written: nothing reads them yet). */
  putNew(clusterId: string, nodes: readonly ClusterNode[]): Promise<void>;
  /** Read-modify-write of one node; `fn` sees a node not changed since its creation as created. */
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
  /** A node as created, for one whose own key does not exist yet: at revision 0, so a write creates that key. */
  const asCreated = async (clusterId: string, nodeId: string): Promise<Versioned<ClusterNode> | undefined> => {
    const created = await readValue<ClusterNode[]>(kv, newNodesKey(clusterId), cache);
    const node = created?.value.find((n) => n.id === nodeId);
    return node && { value: node, revision: 0 };
  };
  const getMany = async (clusterId: string, nodeIds: readonly string[]) => {
    const own = await mapLimit(nodeIds, CONCURRENCY, async (id) => (await readValue<ClusterNode>(kv, kvKey(clusterId, id), cache))?.value);
    const created = own.includes(undefined) ? (await readValue<ClusterNode[]>(kv, newNodesKey(clusterId), cache))?.value : undefined;
    const byId = new Map(created?.map((n) => [n.id, n]));
    return own.flatMap((n, i) => n ?? byId.get(nodeIds[i] ?? "") ?? []);
  };
  return {
    get: async (clusterId, nodeId) => (await getMany(clusterId, [nodeId]))[0],
    getMany,
    cachedMany(clusterId, nodeIds) {
      const nodes: ClusterNode[] = [];
      for (const id of nodeIds) {
        const found = cache.peek<ClusterNode>(kvKey(clusterId, id));
        if (!found) return undefined;
        nodes.push(found.value);
      }
      return nodes;
    },
    async putNew(clusterId, nodes) {
      if (nodes.length === 0 || nodes.length > GROUPED_NEW_NODES) {
        await mapLimit(nodes, CONCURRENCY, (n) => putValue(kv, kvKey(clusterId, n.id), n, cache));
        return;
      }
      await putValue(kv, newNodesKey(clusterId), nodes, cache);
      // The guess a first change starts from: written at revision 0, it creates the node's own key.
      for (const n of nodes) cache.remember(kvKey(clusterId, n.id), encode(n), 0);
    },
    async modify(clusterId, nodeId, fn) {
      const key = kvKey(clusterId, nodeId);
      return (await modifyValue<ClusterNode>(kv, key, async (current) => fn(current ?? (await asCreated(clusterId, nodeId))), { cache })).value;
    },
    async removeCluster(clusterId) {
      await purgeKeys(kv, `${kvKey(clusterId)}.>`);
    },
  };
}
