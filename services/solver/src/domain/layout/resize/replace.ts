/**
 * A replacement machine for a node (docs/catalog.md, Growing and shrinking): the same services, hardware type and
 * image type under a new nodenum. The cluster's layout is the same once the old node is gone, so no constraint
 * is checked; only that the types can still be built on the provider.
 */
import type { SolvedNode } from "@corral/contracts";
import { resolveUsableTypes, toNameMap } from "../catalog.js";
import { sortNames } from "../constraints.js";
import { nonEmpty } from "../layout-request-checks.js";
import { solvedNode, typeEntries } from "../solved-nodes.js";
import type { ReplaceRequest } from "./types.js";

/**
 * The new node that replaces `request.node`.
 *
 * @throws BadRequestError (400) with `details.constraint` `hardwaretype` or `imagetype` when the node's type no
 *   longer exists, is no longer compatible with the template, or has no entry for the provider.
 */
export function replacementNode(request: ReplaceRequest): SolvedNode {
  const { node, template } = request;
  const hardware = resolveUsableTypes("hardware", toNameMap(request.catalog.hardwareTypes), node.hardwaretype, template, request.provider.name);
  const images = resolveUsableTypes("image", toNameMap(request.catalog.imageTypes), node.imagetype, template, request.provider.name);
  const services = sortNames([...new Set(node.services)]);
  return solvedNode(services, node.hardwaretype, node.imagetype, request.nodenum, typeEntries(hardware, images), {
    clusterId: request.clusterId,
    clusterName: request.clusterName,
    dnsSuffix: nonEmpty(request.dnsSuffix),
  });
}
