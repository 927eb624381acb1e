import { encode, withEncodedEntries, type EncodedEntry } from "./codec.js";
import type { TaskMessage } from "./task-protocol.js";

/**
 * The parts of `config` the tasks of one dispatch share (task-builder.ts): every node of the cluster (`nodes`), the
 * cluster's config of a node-level task (`cluster`, kilobytes in real templates), the provider and the nodes of a
 * `hosts: service` step (`stepNodes`). Encoding each once per dispatch instead of once per task keeps a stage's
 * encoding linear in the cluster's size.
 */
const SHARED_PARTS = new Set(["nodes", "cluster", "provider", "stepNodes"]);
/** Shared parts already encoded. An object must not change once encoded. */
const encodedParts = new WeakMap<object, Uint8Array>();

/** The msgpack bytes of a task message: the same as `encode(m)` decodes to, with the shared parts encoded once. */
export function encodeTaskMessage(m: TaskMessage): Uint8Array {
  const { config, ...envelope } = m;
  const own: Record<string, unknown> = {};
  const shared: EncodedEntry[] = [];
  for (const [key, value] of Object.entries(config)) {
    if (!SHARED_PARTS.has(key) || typeof value !== "object" || value === null) {
      own[key] = value;
      continue;
    }
    let bytes = encodedParts.get(value);
    if (!bytes) encodedParts.set(value, (bytes = encode(value)));
    shared.push([key, bytes]);
  }
  return withEncodedEntries(encode(envelope), [["config", withEncodedEntries(encode(own), shared)]]);
}
