import type { ClusterNode } from "./records.js";

/** The hardware and image type a stored node was created with: the layout solver put them in its properties. */
export function nodeTypesOf(node: Pick<ClusterNode, "properties">): { hardwaretype: string; imagetype: string } {
  return { hardwaretype: String(node.properties["hardwaretype"] ?? ""), imagetype: String(node.properties["imagetype"] ?? "") };
}
