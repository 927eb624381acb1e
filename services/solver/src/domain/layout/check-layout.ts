/**
 * Whole-layout validity, as Coopr's `ClusterLayout.isValid` (docs/catalog.md, Cluster templates and
 * constraints): every node passes the service-set test (mustcoexist pruned to the services present on the
 * cluster) and the per-service hardware/image test, and every present service with a service constraint is on
 * min..max nodes.
 */
import type { ClusterTemplate, ExistingNode } from "@corral/contracts";
import {
  describeBounds,
  firstServiceSetViolation,
  firstTypeViolation,
  nodeLayoutKey,
  normalizeConstraints,
  sortNames,
  type NormalizedConstraints,
} from "./constraints.js";
import type { LayoutViolation } from "./types.js";

/**
 * Lists the constraints of `template` that `nodes` break (empty when the layout is valid). Services present
 * on no node are not checked, as in Coopr. Nodes with the same hardware type, image type and services are
 * reported together.
 */
export function checkLayout(template: ClusterTemplate, nodes: readonly ExistingNode[]): LayoutViolation[] {
  return layoutViolations(normalizeConstraints(template), nodes);
}

export function layoutViolations(
  constraints: NormalizedConstraints,
  nodes: readonly ExistingNode[],
): LayoutViolation[] {
  const violations: LayoutViolation[] = [];
  const present = new Set<string>();
  const serviceCounts = new Map<string, number>();
  const groups = new Map<string, { node: ExistingNode; ids: string[] }>();
  for (const node of nodes) {
    const services = new Set(node.services);
    for (const s of services) {
      present.add(s);
      serviceCounts.set(s, (serviceCounts.get(s) ?? 0) + 1);
    }
    const key = nodeLayoutKey(node.hardwaretype, node.imagetype, sortNames([...services]));
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { node, ids: [node.id] });
    else group.ids.push(node.id);
  }
  for (const { node, ids } of groups.values()) {
    const set = new Set(node.services);
    const what = `node${ids.length === 1 ? "" : "s"} ${ids.join(", ")}`;
    const v = firstServiceSetViolation(set, constraints, present);
    if (v?.kind === "cantcoexist") {
      violations.push({ constraint: "cantcoexist", message: `${what} hold all of cantcoexist [${v.set.join(", ")}]`, nodeIds: ids });
    } else if (v?.kind === "mustcoexist") {
      violations.push({
        constraint: "mustcoexist",
        message: `${what} lack ${v.missing.join(", ")} of mustcoexist [${v.set.join(", ")}]`,
        nodeIds: ids,
      });
    }
    const t = firstTypeViolation(set, node.hardwaretype, node.imagetype, constraints);
    if (t !== undefined) {
      const type = t.kind === "hardwaretypes" ? node.hardwaretype : node.imagetype;
      violations.push({
        constraint: t.kind,
        message: `${what} use ${t.kind === "hardwaretypes" ? "hardware" : "image"} type ${type}, but ${t.service} allows only [${t.allowed.join(", ")}]`,
        nodeIds: ids,
      });
    }
  }
  for (const [s, count] of serviceCounts) {
    const sc = constraints.services.get(s);
    if (sc === undefined) continue;
    if (count < sc.min || count > sc.max) {
      violations.push({
        constraint: "quantities",
        message: `${s} is on ${count} node${count === 1 ? "" : "s"}, but must be on ${describeBounds(sc)}`,
      });
    }
  }
  return violations;
}
