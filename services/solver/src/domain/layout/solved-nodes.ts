/**
 * The nodes of a solved layout: node layouts with their counts, numbered from {@link FIRST_NODENUM} in
 * preference order, each with its id, hostname and the provider's flavor and image.
 */
import type { UsableType } from "./catalog.js";
import { createHostname, nodeIdFor } from "./hostname.js";
import type { CandidateLayout } from "./node-layouts.js";
import type { NodeLayoutCount, SolvedNode } from "@corral/contracts";

/** Nodes are numbered from here, as in Coopr. */
export const FIRST_NODENUM = 1000;

/** Names of the nodes: cluster id and name, and the dns suffix when one is given. */
export interface NodeNaming {
  clusterId: string;
  clusterName: string;
  dnsSuffix: string | undefined;
}

/** The nodes of `counts` (per layout of `layouts`), and the layouts with a non-zero count. */
export function solvedNodes(
  layouts: readonly CandidateLayout[],
  counts: readonly number[],
  hardware: readonly UsableType[],
  images: readonly UsableType[],
  naming: NodeNaming,
): { nodes: SolvedNode[]; layout: NodeLayoutCount[] } {
  const flavorOf = new Map(hardware.map((h) => [h.name, h.entry["flavor"] as string]));
  const imageOf = new Map(images.map((i) => [i.name, i.entry]));
  const nodes: SolvedNode[] = [];
  const layout: NodeLayoutCount[] = [];
  let nodenum = FIRST_NODENUM;
  counts.forEach((count, i) => {
    if (count === 0) return;
    const l = layouts[i]!;
    layout.push({ services: [...l.services], hardwaretype: l.hardwaretype, imagetype: l.imagetype, count });
    const flavor = flavorOf.get(l.hardwaretype) as string;
    const imageEntry = imageOf.get(l.imagetype) as Readonly<Record<string, string>>;
    for (let j = 0; j < count; j++, nodenum++) {
      nodes.push({
        id: nodeIdFor(naming.clusterId, nodenum),
        clusterId: naming.clusterId,
        nodenum,
        services: [...l.services],
        hardwaretype: l.hardwaretype,
        imagetype: l.imagetype,
        properties: {
          hostname: createHostname(naming.clusterName, naming.clusterId, nodenum, naming.dnsSuffix),
          nodenum,
          hardwaretype: l.hardwaretype,
          imagetype: l.imagetype,
          flavor,
          image: imageEntry["image"] as string,
          sshuser: imageEntry["sshuser"] ?? "root",
        },
      });
    }
  });
  return { nodes, layout };
}
