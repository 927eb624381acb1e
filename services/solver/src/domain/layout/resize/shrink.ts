/**
 * Whether nodes may leave a live cluster (docs/catalog.md, Growing and shrinking). Removing nodes cannot break a
 * mustcoexist, cantcoexist or type constraint, nor a quantities max: the remaining nodes are unchanged and a
 * mustcoexist set only loosens when its services leave the cluster. What it can break is checked here: the size
 * min, a quantities min, and a service left without what it requires.
 */
import { BadRequestError, ConflictError, NotFoundError, type Service } from "@corral/contracts";
import { toNameMap } from "../catalog.js";
import { normalizeConstraints, sortNames } from "../constraints.js";
import { clusterState, nodeCount, nodesHolding, type ClusterState } from "./cluster-state.js";
import { sizeProblem } from "./size.js";
import type { ShrinkCheck, ShrinkRequest, ShrinkViolation } from "./types.js";

/** The names services on the cluster answer to: their own and the ones they provide. */
function providedNames(state: ClusterState, definitions: ReadonlyMap<string, Service>): Set<string> {
  const names = new Set(state.present);
  for (const s of state.present) for (const p of definitions.get(s)?.dependencies?.provides ?? []) names.add(p);
  return names;
}

function requiredNames(service: Service | undefined): string[] {
  const deps = service?.dependencies;
  return [...new Set([...(deps?.install?.requires ?? []), ...(deps?.runtime?.requires ?? [])])];
}

/**
 * Checks the removal of `remove` from the cluster. Every violation is listed, size first, then quantities, then
 * requires (by service name). A requirement counts only when the removal breaks it: a service whose requirement
 * no node met before is not held against the removal.
 *
 * @throws BadRequestError (400, constraint `nodes`) for an empty list; NotFoundError (404) for an id that is no
 *   node of the cluster.
 */
export function checkShrink(request: ShrinkRequest): ShrinkCheck {
  const constraints = normalizeConstraints(request.template);
  const before = clusterState(request.nodes);
  const ids = new Set(request.remove);
  if (ids.size === 0) throw new BadRequestError("no nodes to remove", { constraint: "nodes" });
  const known = new Set(before.nodes.map((n) => n.id));
  for (const id of ids) if (!known.has(id)) throw new NotFoundError("node", id);
  const remaining = before.nodes.filter((n) => !ids.has(n.id));
  const after = clusterState(remaining);
  const removed = before.nodes.filter((n) => ids.has(n.id)).map((n) => n.id);
  const removing = `removing ${removed.length === 1 ? "node" : "nodes"} ${removed.join(", ")}`;
  const violations: ShrinkViolation[] = [];

  const size = sizeProblem(constraints, request.template.name, before.nodes.length, -removed.length);
  if (size !== undefined) violations.push({ constraint: "size", message: size });

  for (const s of sortNames([...before.present])) {
    const min = constraints.services.get(s)?.min ?? 0;
    const left = nodesHolding(after, s);
    if (left < min && left < nodesHolding(before, s)) {
      violations.push({
        constraint: "quantities",
        service: s,
        message: `service ${s} must be on at least ${nodeCount(min)}; ${removing} leaves it on ${left}`,
      });
    }
  }

  const definitions = toNameMap(request.catalog.services);
  const providedBefore = providedNames(before, definitions);
  const providedAfter = providedNames(after, definitions);
  for (const s of sortNames([...after.present])) {
    for (const name of requiredNames(definitions.get(s))) {
      if (!providedBefore.has(name) || providedAfter.has(name)) continue;
      violations.push({
        constraint: "requires",
        service: s,
        requires: name,
        message: `${s} requires ${name}, which ${removing} takes off the cluster`,
      });
    }
  }

  if (violations.length > 0) return { ok: false, violations };
  const leavingServices = sortNames([...before.present].filter((s) => !after.present.has(s)));
  return { ok: true, remaining, leavingServices };
}

/** The 409 of a refused removal: every reason, `details.constraint` naming the first. */
export function shrinkRefusal(violations: readonly ShrinkViolation[]): ConflictError {
  return new ConflictError(violations.map((v) => v.message).join("; "), { constraint: violations[0]?.constraint, violations });
}
