/**
 * Automatic repair as a template asks for it (docs/catalog.md, Growing and shrinking): which node of a cluster is
 * due for a new machine. Pure.
 */
import type { ClusterTemplate } from "@corral/contracts";
import { isUnreachable } from "../../domain/node-health.js";
import type { ClusterNode } from "../../domain/records.js";

/** A template's `administration.repair` when it turns repair on: a node unreachable this long is replaced. */
export interface RepairPolicy {
  afterMs: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The repair policy of a cluster's template copy, or undefined when it has none or `auto` is not true. Read
 * defensively: a copy stored before templates had the field, or with an `afterSeconds` that is no non-negative
 * number, turns nothing on.
 */
export function repairPolicyOf(template: ClusterTemplate): RepairPolicy | undefined {
  const administration: unknown = template.administration;
  const repair = isObject(administration) ? administration["repair"] : undefined;
  if (!isObject(repair) || repair["auto"] !== true) return undefined;
  const after = Number(repair["afterSeconds"]);
  if (!Number.isFinite(after) || after < 0) return undefined;
  return { afterMs: after * 1000 };
}

/**
 * The node to replace at `now`: of the nodes whose machine has been `missing` or `unreachable` for longer than the
 * policy's time, the one with the lowest nodenum; undefined when none is.
 */
export function nodeDueForRepair(nodes: readonly ClusterNode[], policy: RepairPolicy, now: number): ClusterNode | undefined {
  let due: ClusterNode | undefined;
  for (const node of nodes) {
    const since = node.health?.since;
    if (!isUnreachable(node) || since === undefined || now - since <= policy.afterMs) continue;
    if (!due || node.nodenum < due.nodenum) due = node;
  }
  return due;
}
