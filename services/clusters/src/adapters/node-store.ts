import { kvKey } from "@corral/contracts";
import { mapLimit, modifyValue, purgeKeys, putValue, readValue, RevisionCache, updateValue, type KV, type Versioned } from "@corral/shared";
import type { ClusterNode } from "../domain/records.js";

const CONCURRENCY = 256;
/** A cluster of up to this many nodes keeps them together under one key (its node group). */
export const GROUPED_NODES = 64;
/**
 * A node group whose stored size passes this moves its nodes to keys of their own, for good: action histories
 * grow with every task, and one change would otherwise rewrite them all.
 */
export const GROUP_MAX_BYTES = 128 * 1024;

/** A cluster's node group: its nodes while they live together, `moved` once each has a key of its own. */
type NodeGroup = { nodes: ClusterNode[] } | { moved: true };
/** The key of a cluster's node group; never a node id (those are `<cluster>-<number>`). */
const groupKey = (clusterId: string) => kvKey(clusterId, "nodes");
/** Before node groups: a small cluster's nodes as created, each overridden by its own key once that exists. */
const legacyCreatedKey = (clusterId: string) => kvKey(clusterId, "created");

/** A change of one node: the node after it, or `undefined` to leave the node as it is. */
export type NodeChange = (node: ClusterNode) => ClusterNode | undefined;

/**
 * A cluster's nodes. A cluster of up to {@link GROUPED_NODES} nodes keeps them under one key (`<cluster>.nodes`),
 * so the results of a stage, applied together, cost the cluster one write instead of one per node; compare-and-set
 * merges concurrent writers. A larger cluster, or a group grown past {@link GROUP_MAX_BYTES}, has a key per node
 * (`<cluster>.<node>`), and its group key says `moved`. Clusters created before node groups have no group key: a
 * node's own key, or the nodes as created (`<cluster>.created`).
 */
export interface NodeStore {
  get(clusterId: string, nodeId: string): Promise<ClusterNode | undefined>;
  /** The nodes with these ids, in that order (missing ones skipped). */
  getMany(clusterId: string, nodeIds: readonly string[]): Promise<ClusterNode[]>;
  /** The last versions this process wrote or read, when it has all of them (may be behind: see callers). */
  cachedMany(clusterId: string, nodeIds: readonly string[]): ClusterNode[] | undefined;
  /** Stores the nodes of a new cluster (before the cluster record is written: nothing reads them yet). */
  putNew(clusterId: string, nodes: readonly ClusterNode[]): Promise<void>;
  /**
   * Stores nodes a live cluster gains (before the cluster record counts them: nothing reads them yet), replacing
   * any stored node of the same id.
   */
  putAdded(clusterId: string, nodes: readonly ClusterNode[]): Promise<void>;
  /**
   * Read-modify-write of some of a cluster's nodes, in one write where they are grouped; a change may run more than
   * once (compare-and-set), so it must be pure. Missing nodes are skipped. Answers the nodes changed, as written.
   */
  modifyMany(clusterId: string, changes: ReadonlyMap<string, NodeChange>): Promise<Map<string, ClusterNode>>;
  /** Removes every node of a cluster with its history (tenant deletion). */
  removeCluster(clusterId: string): Promise<void>;
}

export function createNodeStore(kv: KV): NodeStore {
  // Results modify nodes the moment after this process wrote them: the compare-and-set needs no read first.
  const cache = new RevisionCache(50_000, 64 * 1024 * 1024);
  /**
   * Clusters seen to keep their nodes apart for good: `moved` (a group key says so) or `legacy` (created before node
   * groups: no group key ever appears). Their changes and reads then skip the group key.
   */
  const apart = new Map<string, "moved" | "legacy">();

  /** Every node under a key of its own (a large cluster's, or a group's that grew too large). */
  const putApart = (clusterId: string, nodes: readonly ClusterNode[]) =>
    mapLimit(nodes, CONCURRENCY, (n) => putValue(kv, kvKey(clusterId, n.id), n, cache));

  /** Nodes with a key of their own, or (before node groups) as created. */
  const readApart = async (clusterId: string, nodeIds: readonly string[], grouped: boolean) => {
    const own = await mapLimit(nodeIds, CONCURRENCY, async (id) => (await readValue<ClusterNode>(kv, kvKey(clusterId, id), cache))?.value);
    const missing = own.includes(undefined);
    const created = !grouped && missing ? (await readValue<ClusterNode[]>(kv, legacyCreatedKey(clusterId), cache))?.value : undefined;
    if (!grouped && (created || !missing)) apart.set(clusterId, "legacy");
    const byId = new Map(created?.map((n) => [n.id, n]));
    return own.flatMap((n, i) => n ?? byId.get(nodeIds[i] ?? "") ?? []);
  };

  const getMany = async (clusterId: string, nodeIds: readonly string[]) => {
    const known = apart.get(clusterId);
    if (known) return readApart(clusterId, nodeIds, known === "moved");
    const group = (await readValue<NodeGroup>(kv, groupKey(clusterId), cache))?.value;
    if (group && "nodes" in group) return pick(group.nodes, nodeIds);
    if (group) apart.set(clusterId, "moved");
    return readApart(clusterId, nodeIds, group !== undefined);
  };

  /** Each node with a key of its own: changed one by one (moved groups, large clusters, clusters before groups). */
  const modifyApart = async (clusterId: string, changes: ReadonlyMap<string, NodeChange>, grouped: boolean) => {
    const changed = new Map<string, ClusterNode>();
    await mapLimit([...changes], CONCURRENCY, async ([nodeId, change]) => {
      const key = kvKey(clusterId, nodeId);
      const asCreated = async (): Promise<Versioned<ClusterNode> | undefined> => {
        if (grouped) return undefined;
        const node = (await readValue<ClusterNode[]>(kv, legacyCreatedKey(clusterId), cache))?.value.find((n) => n.id === nodeId);
        // At revision 0, so a write creates the node's own key.
        return node && { value: node, revision: 0 };
      };
      const { value } = await modifyValue<ClusterNode>(
        kv,
        key,
        async (current) => {
          const node = current ?? (await asCreated());
          const next = node && change(node.value);
          return next ? { put: next } : { keep: true };
        },
        { cache },
      );
      if (value) changed.set(nodeId, value);
      if (value && !grouped) apart.set(clusterId, "legacy");
    });
    return changed;
  };

  /**
   * Gives every node of a group that has grown too large a key of its own, then marks the group `moved`. Until the
   * mark is written the group stays what readers and writers use, so a crash in between leaves only keys nobody
   * reads, written again by the next move.
   */
  const moveApart = async (clusterId: string) => {
    for (let attempt = 0; attempt < 10; attempt++) {
      const group = await readValue<NodeGroup>(kv, groupKey(clusterId), cache);
      if (!group || !("nodes" in group.value)) return;
      await putApart(clusterId, group.value.nodes);
      if ((await updateValue<NodeGroup>(kv, groupKey(clusterId), { moved: true }, group.revision, cache)) !== undefined) {
        apart.set(clusterId, "moved");
        return;
      }
    }
  };

  return {
    get: async (clusterId, nodeId) => (await getMany(clusterId, [nodeId]))[0],
    getMany,
    cachedMany(clusterId, nodeIds) {
      const group = cache.peek<NodeGroup>(groupKey(clusterId))?.value;
      if (group && "nodes" in group) {
        const nodes = pick(group.nodes, nodeIds);
        return nodes.length === nodeIds.length ? nodes : undefined;
      }
      const nodes: ClusterNode[] = [];
      for (const id of nodeIds) {
        const found = cache.peek<ClusterNode>(kvKey(clusterId, id));
        if (!found) return undefined;
        nodes.push(found.value);
      }
      return nodes;
    },
    async putNew(clusterId, nodes) {
      if (nodes.length <= GROUPED_NODES) {
        await putValue<NodeGroup>(kv, groupKey(clusterId), { nodes: [...nodes] }, cache);
        return;
      }
      await putApart(clusterId, nodes);
      await putValue<NodeGroup>(kv, groupKey(clusterId), { moved: true }, cache);
      apart.set(clusterId, "moved");
    },
    async putAdded(clusterId, nodes) {
      if (nodes.length === 0) return;
      const ids = new Set(nodes.map((n) => n.id));
      let grouped = false;
      if (!apart.has(clusterId)) {
        const { value: group } = await modifyValue<NodeGroup>(
          kv,
          groupKey(clusterId),
          (current) => {
            if (!current || !("nodes" in current.value)) return { keep: true };
            const kept = current.value.nodes.filter((n) => !ids.has(n.id));
            if (kept.length + nodes.length > GROUPED_NODES) return { keep: true };
            return { put: { nodes: [...kept, ...nodes] } };
          },
          { cache },
        );
        grouped = group !== undefined && "nodes" in group && nodes.every((n) => group.nodes.some((g) => g.id === n.id));
        if (grouped && (cache.bytesOf(groupKey(clusterId)) ?? 0) > GROUP_MAX_BYTES) await moveApart(clusterId);
        if (!grouped && group && "nodes" in group) await moveApart(clusterId);
      }
      if (!grouped) await putApart(clusterId, nodes);
    },
    async modifyMany(clusterId, changes) {
      if (changes.size === 0) return new Map();
      const known = apart.get(clusterId);
      if (known) return modifyApart(clusterId, changes, known === "moved");
      const changed = new Map<string, ClusterNode>();
      const { value: group } = await modifyValue<NodeGroup>(
        kv,
        groupKey(clusterId),
        (current) => {
          changed.clear();
          if (!current || !("nodes" in current.value)) return { keep: true };
          const nodes = current.value.nodes.map((node) => {
            const next = changes.get(node.id)?.(node);
            if (next) changed.set(node.id, next);
            return next ?? node;
          });
          return changed.size > 0 ? { put: { nodes } } : { keep: true };
        },
        { cache },
      );
      if (group && "nodes" in group) {
        if ((cache.bytesOf(groupKey(clusterId)) ?? 0) > GROUP_MAX_BYTES) await moveApart(clusterId);
        return changed;
      }
      if (group) {
        apart.set(clusterId, "moved");
        return modifyApart(clusterId, changes, true);
      }
      return modifyApart(clusterId, changes, false);
    },
    async removeCluster(clusterId) {
      apart.delete(clusterId);
      await purgeKeys(kv, `${kvKey(clusterId)}.>`);
    },
  };
}

/** The nodes with these ids, in that order (missing ones skipped). */
function pick(nodes: readonly ClusterNode[], nodeIds: readonly string[]): ClusterNode[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  return nodeIds.flatMap((id) => byId.get(id) ?? []);
}
