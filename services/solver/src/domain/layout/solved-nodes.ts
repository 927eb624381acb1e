/**
 * The nodes of a solved layout: node layouts with their counts, numbered in preference order from
 * {@link FIRST_NODENUM} (a new cluster) or the cluster's next nodenum (new nodes of a live one), each with its id,
 * hostname and the provider's flavor and image.
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

/** The provider's flavor and image of each usable hardware and image type, as new nodes' properties take them. */
export interface TypeEntries {
  flavorOf: ReadonlyMap<string, string>;
  imageOf: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

export function typeEntries(hardware: readonly UsableType[], images: readonly UsableType[]): TypeEntries {
  return {
    flavorOf: new Map(hardware.map((h) => [h.name, h.entry["flavor"] as string])),
    imageOf: new Map(images.map((i) => [i.name, i.entry])),
  };
}

/** Node `nodenum` of a cluster with `services` on `hardwaretype` and `imagetype` (both among `entries`). */
export function solvedNode(
  services: readonly string[],
  hardwaretype: string,
  imagetype: string,
  nodenum: number,
  entries: TypeEntries,
  naming: NodeNaming,
): SolvedNode {
  const imageEntry = entries.imageOf.get(imagetype) as Readonly<Record<string, string>>;
  return {
    id: nodeIdFor(naming.clusterId, nodenum),
    clusterId: naming.clusterId,
    nodenum,
    services: [...services],
    hardwaretype,
    imagetype,
    properties: {
      hostname: createHostname(naming.clusterName, naming.clusterId, nodenum, naming.dnsSuffix),
      nodenum,
      hardwaretype,
      imagetype,
      flavor: entries.flavorOf.get(hardwaretype) as string,
      image: imageEntry["image"] as string,
      sshuser: imageEntry["sshuser"] ?? "root",
    },
  };
}

/**
 * The nodes of `counts` (per layout of `layouts`), numbered from `firstNodenum`, and the layouts with a non-zero
 * count.
 */
export function solvedNodes(
  layouts: readonly CandidateLayout[],
  counts: readonly number[],
  hardware: readonly UsableType[],
  images: readonly UsableType[],
  naming: NodeNaming,
  firstNodenum = FIRST_NODENUM,
): { nodes: SolvedNode[]; layout: NodeLayoutCount[] } {
  const entries = typeEntries(hardware, images);
  const nodes: SolvedNode[] = [];
  const layout: NodeLayoutCount[] = [];
  let nodenum = firstNodenum;
  counts.forEach((count, i) => {
    if (count === 0) return;
    const l = layouts[i]!;
    layout.push({ services: [...l.services], hardwaretype: l.hardwaretype, imagetype: l.imagetype, count });
    for (let j = 0; j < count; j++, nodenum++) nodes.push(solvedNode(l.services, l.hardwaretype, l.imagetype, nodenum, entries, naming));
  });
  return { nodes, layout };
}
