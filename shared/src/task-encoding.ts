import { encode, withEncodedEntries } from "@corral/contracts";
import type { TaskMessage } from "./tasks.js";

/**
 * `config.nodes` objects already encoded. The tasks of one dispatch share one such object (task-builder.ts), and it
 * holds every node of the cluster: encoding it once per dispatch instead of once per task keeps a stage's
 * encoding linear in the cluster's size. An object must not change once encoded.
 */
const encodedNodes = new WeakMap<object, Uint8Array>();

/** The msgpack bytes of a task message: the same as `encode(m)` decodes to, with `config.nodes` encoded once. */
export function encodeTaskMessage(m: TaskMessage): Uint8Array {
  const { config, ...envelope } = m;
  const { nodes, ...own } = config;
  let configBytes = encode(own);
  if (nodes) {
    let nodesBytes = encodedNodes.get(nodes);
    if (!nodesBytes) encodedNodes.set(nodes, (nodesBytes = encode(nodes)));
    configBytes = withEncodedEntries(configBytes, [["nodes", nodesBytes]]);
  }
  return withEncodedEntries(encode(envelope), [["config", configBytes]]);
}
