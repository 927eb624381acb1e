/**
 * Whether the nodes of one node layout can, or must, take one more service, and why not (for messages).
 */
import { firstServiceSetViolation, firstTypeViolation, type NormalizedConstraints } from "../constraints.js";

/** The node layout a service would be added to. */
export interface NodeLayoutShape {
  serviceSet: ReadonlySet<string>;
  hardwaretype: string;
  imagetype: string;
}

/**
 * Why a node with `node`'s layout cannot hold `service` as well, once `service` is on the cluster
 * (`present`: the services on the cluster before); undefined when it can.
 */
export function whyNodeCannotTake(
  node: NodeLayoutShape,
  service: string,
  present: ReadonlySet<string>,
  constraints: NormalizedConstraints,
): string | undefined {
  const expanded = new Set(node.serviceSet).add(service);
  const clusterServices = present.has(service) ? present : new Set(present).add(service);
  const v = firstServiceSetViolation(expanded, constraints, clusterServices);
  if (v?.kind === "cantcoexist") return `cantcoexist [${v.set.join(", ")}]`;
  if (v?.kind === "mustcoexist") return `mustcoexist [${v.set.join(", ")}] (the node lacks ${v.missing.join(", ")})`;
  const t = firstTypeViolation(expanded, node.hardwaretype, node.imagetype, constraints);
  if (t !== undefined) {
    const type = t.kind === "hardwaretypes" ? node.hardwaretype : node.imagetype;
    return `${t.service} allows ${t.kind === "hardwaretypes" ? "hardware" : "image"} types [${t.allowed.join(", ")}], the node has ${type}`;
  }
  return undefined;
}

/** The mustcoexist set that makes a node holding `serviceSet` take `service` once it is on the cluster, if any. */
export function forcingMustcoexist(
  serviceSet: ReadonlySet<string>,
  service: string,
  present: ReadonlySet<string>,
  constraints: NormalizedConstraints,
): readonly string[] | undefined {
  return constraints.mustcoexist.find(
    (must) => must.includes(service) && must.some((t) => t !== service && present.has(t) && serviceSet.has(t)),
  );
}
