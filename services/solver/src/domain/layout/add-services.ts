/**
 * The add-services solver (reference coopr-algorithms.md 2.7): places new services on the existing nodes of
 * a cluster; nothing moves, no node is added, no node changes hardware or image.
 *
 * It searches what Coopr's `ClusterLayoutUpdater` searches, in the same order, so it returns Coopr's answer
 * whenever Coopr's answer holds every requested service:
 * - services with a service constraint first (max ascending, min descending, name), then the others by
 *   name (Coopr: hash-set order);
 * - for one service, the candidate changes are "add it to c_j nodes of node layout j" over the layouts that
 *   can take it, sorted by Coopr's node-layout comparator, with the total k going from min(max, nodes that can
 *   take it) down to max(min, 1), and for each k the vectors c in descending lexicographic order;
 * - a change is kept when the whole layout stays valid, then the next service is placed; on a dead end the
 *   next change is tried, with the pending services restored (Coopr lost them: its answer could silently drop
 *   a service).
 *
 * Differences: candidate changes that cannot be valid are never generated (a node layout that must take the
 * service because of a mustcoexist set takes it on every node; one that cannot take it gets none), and the
 * pending services are checked ahead: the nodes that could still take a pending service only get fewer and
 * the nodes that must take it only get more as services are added, so a change that leaves a pending service
 * too few possible nodes, or a forced node that cannot take it, is cut (also for partial vectors). Concrete
 * nodes are chosen deterministically: within a node layout, the lowest nodenums first.
 */
import { BadRequestError } from "../../../../../shared/src/errors.js";
import { Budget } from "./budget.js";
import { checkDependencies, checkServiceCompatibility, lookupServices, toNameMap } from "./catalog.js";
import { layoutViolations } from "./check-layout.js";
import {
  compareNodeLayouts,
  compareStrings,
  describeNodes,
  firstServiceSetViolation,
  firstTypeViolation,
  normalizeConstraints,
  sortNames,
  type NormalizedConstraints,
} from "./constraints.js";
import type { AddServicesRequest, AddServicesResult, ChangedNode, SolverOptions } from "./types.js";

interface Group {
  key: string;
  /** Sorted. */
  services: string[];
  set: ReadonlySet<string>;
  hardwaretype: string;
  imagetype: string;
  count: number;
}

interface State {
  groups: Group[];
  /** Services on at least one node. */
  present: ReadonlySet<string>;
}

/** "Add `service` to `count` nodes of the group with key `key`." */
interface Pick {
  key: string;
  count: number;
}
interface Change {
  service: string;
  picks: Pick[];
}

const groupKey = (hw: string, img: string, services: readonly string[]): string =>
  `${hw}\u0000${img}\u0000${services.join("\u0000")}`;

/**
 * Adds services to an active cluster's existing nodes.
 *
 * @throws BadRequestError (400, `bad_request`) when the request is invalid or no placement exists;
 *   `details.constraint` names the check (`services`, `compatibility.services`, `requires`, `conflicts`,
 *   `layout`, `mustcoexist`, `quantities`).
 * @throws BadRequestError (400, `solver_budget_exhausted`) when the search runs out of steps or time.
 */
export function addServices(request: AddServicesRequest, options?: SolverOptions): AddServicesResult {
  const budget = new Budget(options, "add-services solver");
  const constraints = normalizeConstraints(request.template);
  const toAdd = [...new Set(request.services)];
  if (toAdd.length === 0) throw new BadRequestError("no services to add", { constraint: "services" });
  const nodes = [...request.nodes].sort((a, b) => a.nodenum - b.nodenum || compareStrings(a.id, b.id));
  if (nodes.length === 0) throw new BadRequestError("the cluster has no nodes", { constraint: "nodes" });
  const clusterServices = [...new Set(request.clusterServices ?? nodes.flatMap((n) => [...n.services]))];
  const already = toAdd.filter((s) => clusterServices.includes(s));
  if (already.length > 0) {
    throw new BadRequestError(`${already.join(", ")} ${already.length === 1 ? "is" : "are"} already on the cluster`, {
      constraint: "services",
      services: already,
    });
  }
  const catalog = toNameMap(request.catalog.services);
  const union = lookupServices(catalog, [...clusterServices, ...toAdd]);
  checkServiceCompatibility(request.template, toAdd);
  checkDependencies(union);

  const existing = layoutViolations(constraints, nodes);
  if (existing.length > 0) {
    throw new BadRequestError(
      `the cluster's current layout already breaks its template: ${existing.map((v) => v.message).join("; ")}`,
      { constraint: existing[0]!.constraint, violations: existing },
    );
  }

  const order = serviceOrder(toAdd, constraints);
  const initial = initialState(nodes);
  const total = nodes.length;
  // Each service alone, on the cluster as it is: a failure here can only get worse, so report it precisely.
  for (const s of order) {
    const v = verdict(initial, s, constraints, total);
    if (!v.ok) throw new BadRequestError(v.message, v.details);
  }
  const search = new PlacementSearch(constraints, total, budget);
  const changes = search.place(initial, order, 0);
  if (changes === null) throw search.failure(order);
  return materialize(nodes, clusterServices, toAdd, changes, budget.steps, initial.groups.length);
}

/** Coopr's order: constrained services by max ascending, min descending, name; then the rest by name. */
function serviceOrder(services: readonly string[], constraints: NormalizedConstraints): string[] {
  const constrained = services.filter((s) => constraints.services.has(s));
  const free = services.filter((s) => !constraints.services.has(s));
  constrained.sort((a, b) => {
    const ca = constraints.services.get(a)!;
    const cb = constraints.services.get(b)!;
    if (ca.max !== cb.max) return ca.max < cb.max ? -1 : 1;
    if (ca.min !== cb.min) return cb.min - ca.min;
    return compareStrings(a, b);
  });
  return [...constrained, ...sortNames(free)];
}

function initialState(nodes: readonly AddServicesRequest["nodes"][number][]): State {
  const groups = new Map<string, Group>();
  const present = new Set<string>();
  for (const node of nodes) {
    const services = sortNames([...new Set(node.services)]);
    for (const s of services) present.add(s);
    const key = groupKey(node.hardwaretype, node.imagetype, services);
    const g = groups.get(key);
    if (g === undefined) {
      groups.set(key, {
        key,
        services,
        set: new Set(services),
        hardwaretype: node.hardwaretype,
        imagetype: node.imagetype,
        count: 1,
      });
    } else {
      g.count++;
    }
  }
  return { groups: [...groups.values()], present };
}

/** Why `set` (a node's services plus `service`) cannot hold `service`; undefined when it can. */
function expansionProblem(
  set: ReadonlySet<string>,
  hardwaretype: string,
  imagetype: string,
  service: string,
  present: ReadonlySet<string>,
  constraints: NormalizedConstraints,
): string | undefined {
  const expanded = new Set(set).add(service);
  const clusterServices = present.has(service) ? present : new Set(present).add(service);
  const v = firstServiceSetViolation(expanded, constraints, clusterServices);
  if (v?.kind === "cantcoexist") return `cantcoexist [${v.set.join(", ")}]`;
  if (v?.kind === "mustcoexist") return `mustcoexist [${v.set.join(", ")}] (the node lacks ${v.missing.join(", ")})`;
  const t = firstTypeViolation(expanded, hardwaretype, imagetype, constraints);
  if (t !== undefined) {
    const type = t.kind === "hardwaretypes" ? hardwaretype : imagetype;
    return `${t.service} allows ${t.kind === "hardwaretypes" ? "hardware" : "image"} types [${t.allowed.join(", ")}], the node has ${type}`;
  }
  return undefined;
}

/** The mustcoexist set that makes a node holding `set` take `service` once it is on the cluster, if any. */
function forcingSet(
  set: ReadonlySet<string>,
  service: string,
  present: ReadonlySet<string>,
  constraints: NormalizedConstraints,
): readonly string[] | undefined {
  return constraints.mustcoexist.find(
    (must) => must.includes(service) && must.some((t) => t !== service && present.has(t) && set.has(t)),
  );
}

type Verdict =
  | { ok: true; expandable: number[]; forced: boolean[]; kmin: number; kmax: number }
  | { ok: false; message: string; details: Record<string, unknown> };

const nodesOf = (g: Group): string => `${g.count} node${g.count === 1 ? "" : "s"} with [${g.services.join(", ")}]`;

/** Which groups can and which must take `s`, and the range of node counts for it. */
function verdict(state: State, s: string, constraints: NormalizedConstraints, total: number): Verdict {
  const sc = constraints.services.get(s);
  const expandable: number[] = [];
  const forced: boolean[] = [];
  const refusals: string[] = [];
  let forcedCount = 0;
  let capacity = 0;
  for (let g = 0; g < state.groups.length; g++) {
    const group = state.groups[g]!;
    const problem = expansionProblem(group.set, group.hardwaretype, group.imagetype, s, state.present, constraints);
    const must = forcingSet(group.set, s, state.present, constraints);
    if (problem === undefined) {
      expandable.push(g);
      forced.push(must !== undefined);
      capacity += group.count;
      if (must !== undefined) forcedCount += group.count;
      continue;
    }
    refusals.push(`${nodesOf(group)}: ${problem}`);
    if (must !== undefined) {
      return {
        ok: false,
        message: `${s} must go on every node holding ${must.filter((t) => t !== s && group.set.has(t)).join(", ")} (mustcoexist [${must.join(", ")}]), but ${nodesOf(group)} cannot take it: ${problem}`,
        details: { constraint: "mustcoexist", service: s, mustcoexist: must, reason: problem },
      };
    }
  }
  if (expandable.length === 0) {
    return {
      ok: false,
      message: `no node can take ${s}: ${refusals.slice(0, 5).join("; ")}${refusals.length > 5 ? "; ..." : ""}`,
      details: { constraint: "layout", service: s, reasons: refusals },
    };
  }
  const bounds = { min: sc?.min ?? 0, max: sc?.max ?? Infinity };
  const kmin = Math.max(bounds.min, 1, forcedCount);
  const kmax = Math.min(bounds.max, capacity, total);
  if (forcedCount > bounds.max) {
    return {
      ok: false,
      message: `${s} must go on ${forcedCount} nodes (mustcoexist with services already there), but must be on ${describeNodes(bounds)}`,
      details: { constraint: "quantities", service: s, forcedNodes: forcedCount, min: bounds.min, max: bounds.max === Infinity ? null : bounds.max },
    };
  }
  if (kmin > kmax) {
    return {
      ok: false,
      message:
        `${s} must be on ${describeNodes({ min: Math.max(bounds.min, 1), max: bounds.max })}, but only ${capacity} ` +
        `node${capacity === 1 ? "" : "s"} can take it` +
        (refusals.length > 0 ? ` (${refusals.slice(0, 5).join("; ")}${refusals.length > 5 ? "; ..." : ""})` : ""),
      details: { constraint: "quantities", service: s, min: bounds.min, max: bounds.max === Infinity ? null : bounds.max, capacity, reasons: refusals },
    };
  }
  return { ok: true, expandable, forced, kmin, kmax };
}

/** Per pending service, the two states a group can end in: without (0) and with (1) the service placed now. */
interface Outlook {
  lo: number;
  hi: number;
  /** [group][variant]: can take it / must take it. */
  can: boolean[][];
  must: boolean[][];
}

class PlacementSearch {
  /** The deepest point the search reached without a valid change, for the error message. */
  private deepest: { depth: number; placed: string[]; service: string; message: string } | undefined;

  constructor(
    private readonly constraints: NormalizedConstraints,
    private readonly total: number,
    private readonly budget: Budget,
  ) {}

  place(state: State, order: readonly string[], depth: number): Change[] | null {
    if (depth === order.length) return [];
    const s = order[depth]!;
    const v = verdict(state, s, this.constraints, this.total);
    if (!v.ok) {
      this.noteFailure(depth, order, s, v.message);
      return null;
    }
    const groups = state.groups;
    const sorted = [...v.expandable.keys()].sort((a, b) =>
      compareNodeLayouts(groups[v.expandable[a]!]!, groups[v.expandable[b]!]!),
    );
    const slots = sorted.map((i) => ({ group: v.expandable[i]!, forced: v.forced[i]! }));
    const presentAfter = new Set(state.present).add(s);
    const outlooks = order.slice(depth + 1).map((r) => this.outlook(groups, s, r, presentAfter));
    const fixed = groups.map((_, g) => !slots.some((slot) => slot.group === g));
    for (let k = v.kmax; k >= v.kmin; k--) {
      for (const counts of this.compositions(groups, slots, fixed, outlooks, k)) {
        const picks: Pick[] = [];
        counts.forEach((c, j) => {
          if (c > 0) picks.push({ key: groups[slots[j]!.group]!.key, count: c });
        });
        const rest = this.place(apply(state, s, picks), order, depth + 1);
        if (rest !== null) return [{ service: s, picks }, ...rest];
      }
    }
    this.noteFailure(depth, order, s, `no placement of ${s} leaves room for ${order.slice(depth + 1).join(", ")}`);
    return null;
  }

  failure(order: readonly string[]): BadRequestError {
    const d = this.deepest;
    const detail =
      d === undefined
        ? ""
        : d.placed.length === 0
          ? `: ${d.message}`
          : `: after placing ${d.placed.join(", ")}, ${d.message}`;
    return new BadRequestError(`cannot add ${order.join(", ")} together${detail}`, {
      constraint: "layout",
      services: [...order],
      ...(d === undefined ? {} : { service: d.service, reason: d.message }),
    });
  }

  private noteFailure(depth: number, order: readonly string[], service: string, message: string): void {
    if (this.deepest === undefined || depth > this.deepest.depth) {
      this.deepest = { depth, placed: order.slice(0, depth), service, message };
    }
  }

  private outlook(groups: readonly Group[], s: string, r: string, present: ReadonlySet<string>): Outlook {
    const sc = this.constraints.services.get(r);
    const can: boolean[][] = [];
    const must: boolean[][] = [];
    for (const g of groups) {
      const withS = new Set(g.set).add(s);
      can.push([
        expansionProblem(g.set, g.hardwaretype, g.imagetype, r, present, this.constraints) === undefined,
        expansionProblem(withS, g.hardwaretype, g.imagetype, r, present, this.constraints) === undefined,
      ]);
      must.push([
        forcingSet(g.set, r, present, this.constraints) !== undefined,
        forcingSet(withS, r, present, this.constraints) !== undefined,
      ]);
    }
    return { lo: Math.max(sc?.min ?? 0, 1), hi: Math.min(sc?.max ?? Infinity, this.total), can, must };
  }

  /**
   * Vectors c over `slots` (expandable groups in preference order) with sum k, forced slots full, in
   * descending lexicographic order, skipping prefixes that leave a pending service no valid future.
   */
  private *compositions(
    groups: readonly Group[],
    slots: readonly { group: number; forced: boolean }[],
    fixed: readonly boolean[],
    outlooks: readonly Outlook[],
    k: number,
  ): Generator<number[]> {
    const m = slots.length;
    const R = outlooks.length;
    const caps = slots.map((slot) => groups[slot.group]!.count);
    const capAfter = new Array<number>(m + 1).fill(0);
    const forcedAfter = new Array<number>(m + 1).fill(0);
    for (let j = m - 1; j >= 0; j--) {
      capAfter[j] = capAfter[j + 1]! + caps[j]!;
      forcedAfter[j] = forcedAfter[j + 1]! + (slots[j]!.forced ? caps[j]! : 0);
    }
    // Per pending service: contributions of groups that do not take s, and optimistic bounds of undecided slots.
    const baseCan = new Array<number>(R).fill(0);
    const baseMust = new Array<number>(R).fill(0);
    let baseBad = false;
    const sufCan: number[][] = Array.from({ length: m + 1 }, () => new Array<number>(R).fill(0));
    const sufMust: number[][] = Array.from({ length: m + 1 }, () => new Array<number>(R).fill(0));
    const sufBad: boolean[][] = Array.from({ length: m + 1 }, () => new Array<boolean>(R).fill(false));
    for (let r = 0; r < R; r++) {
      const o = outlooks[r]!;
      groups.forEach((g, gi) => {
        if (!fixed[gi]) return;
        if (o.can[gi]![0]) baseCan[r]! += g.count;
        if (o.must[gi]![0]) baseMust[r]! += g.count;
        if (o.must[gi]![0] && !o.can[gi]![0]) baseBad = true;
      });
      for (let j = m - 1; j >= 0; j--) {
        const gi = slots[j]!.group;
        const cap = caps[j]!;
        const [c0, c1] = o.can[gi]! as [boolean, boolean];
        const [f0, f1] = o.must[gi]! as [boolean, boolean];
        const forcedSlot = slots[j]!.forced;
        // A forced slot takes s on every node: only variant 1 exists.
        sufCan[j]![r] = sufCan[j + 1]![r]! + ((forcedSlot ? c1 : c0 || c1) ? cap : 0);
        sufMust[j]![r] = sufMust[j + 1]![r]! + ((forcedSlot ? f1 : f0 && f1) ? cap : 0);
        sufBad[j]![r] = sufBad[j + 1]![r]! || (forcedSlot ? f1 && !c1 : f0 && !c0 && f1 && !c1);
      }
    }
    if (baseBad) return;
    const decCan: number[][] = Array.from({ length: m + 1 }, () => new Array<number>(R).fill(0));
    const decMust: number[][] = Array.from({ length: m + 1 }, () => new Array<number>(R).fill(0));
    const decBad: boolean[][] = Array.from({ length: m + 1 }, () => new Array<boolean>(R).fill(false));
    for (let r = 0; r < R; r++) {
      decCan[0]![r] = baseCan[r]!;
      decMust[0]![r] = baseMust[r]!;
    }
    /** After deciding slots < j: can a pending service still be placed? */
    const hopeful = (j: number): boolean => {
      for (let r = 0; r < R; r++) {
        if (decBad[j]![r] || sufBad[j]![r]) return false;
        const o = outlooks[r]!;
        const must = decMust[j]![r]! + sufMust[j]![r]!;
        const can = decCan[j]![r]! + sufCan[j]![r]!;
        if (must > o.hi || can < o.lo) return false;
      }
      return true;
    };
    const decide = (j: number, c: number): void => {
      const gi = slots[j]!.group;
      const rest = caps[j]! - c;
      for (let r = 0; r < R; r++) {
        const o = outlooks[r]!;
        const [c0, c1] = o.can[gi]! as [boolean, boolean];
        const [f0, f1] = o.must[gi]! as [boolean, boolean];
        decCan[j + 1]![r] = decCan[j]![r]! + (c0 ? rest : 0) + (c1 ? c : 0);
        decMust[j + 1]![r] = decMust[j]![r]! + (f0 ? rest : 0) + (f1 ? c : 0);
        decBad[j + 1]![r] = decBad[j]![r]! || (rest > 0 && f0 && !c0) || (c > 0 && f1 && !c1);
      }
    };
    if (!hopeful(0)) return;
    const c = new Array<number>(m).fill(0);
    const low = new Array<number>(m).fill(0);
    const remaining = new Array<number>(m + 1).fill(0);
    remaining[0] = k;
    /** Sets the range of slot j given remaining[j]; returns false when empty. */
    const open = (j: number): boolean => {
      const rem = remaining[j]!;
      let hi = Math.min(caps[j]!, rem - forcedAfter[j + 1]!);
      let lo = Math.max(0, rem - capAfter[j + 1]!);
      if (slots[j]!.forced) {
        if (caps[j]! > hi || caps[j]! < lo) return false;
        hi = lo = caps[j]!;
      }
      if (hi < lo) return false;
      c[j] = hi;
      low[j] = lo;
      return true;
    };
    let j = 0;
    if (m === 0 || !open(0)) return;
    for (;;) {
      this.budget.spend();
      decide(j, c[j]!);
      const ok = hopeful(j + 1);
      if (ok && j + 1 === m) {
        if (remaining[j]! - c[j]! === 0) yield [...c];
      } else if (ok) {
        remaining[j + 1] = remaining[j]! - c[j]!;
        if (open(j + 1)) {
          j++;
          continue;
        }
      }
      // Next candidate: decrease the deepest slot that can still decrease.
      for (;;) {
        if (c[j]! > low[j]!) {
          c[j]!--;
          break;
        }
        j--;
        if (j < 0) return;
      }
    }
  }
}

function apply(state: State, s: string, picks: readonly Pick[]): State {
  const byKey = new Map(state.groups.map((g) => [g.key, { ...g }]));
  for (const pick of picks) {
    const from = byKey.get(pick.key)!;
    from.count -= pick.count;
    const services = sortNames([...from.services, s]);
    const key = groupKey(from.hardwaretype, from.imagetype, services);
    const to = byKey.get(key);
    if (to === undefined) {
      byKey.set(key, {
        key,
        services,
        set: new Set(services),
        hardwaretype: from.hardwaretype,
        imagetype: from.imagetype,
        count: pick.count,
      });
    } else {
      to.count += pick.count;
    }
  }
  return {
    groups: [...byKey.values()].filter((g) => g.count > 0),
    present: new Set(state.present).add(s),
  };
}

/** Replays the changes on the concrete nodes: within a node layout, the lowest nodenums take the service. */
function materialize(
  nodes: readonly AddServicesRequest["nodes"][number][],
  clusterServices: readonly string[],
  toAdd: readonly string[],
  changes: readonly Change[],
  steps: number,
  groupCount: number,
): AddServicesResult {
  const services = nodes.map((n) => sortNames([...new Set(n.services)]));
  const members = new Map<string, number[]>(); // group key -> node indices, ascending (nodes are sorted)
  nodes.forEach((n, i) => {
    const key = groupKey(n.hardwaretype, n.imagetype, services[i]!);
    const list = members.get(key);
    if (list === undefined) members.set(key, [i]);
    else list.push(i);
  });
  const added: string[][] = nodes.map(() => []);
  const placed = new Map<string, number[]>();
  for (const change of changes) {
    const receivers: number[] = [];
    for (const pick of change.picks) {
      const list = members.get(pick.key)!;
      const take = list.slice(0, pick.count);
      members.set(pick.key, list.slice(pick.count));
      for (const i of take) {
        services[i] = sortNames([...services[i]!, change.service]);
        added[i]!.push(change.service);
        receivers.push(i);
      }
      const node = nodes[take[0]!]!;
      const key = groupKey(node.hardwaretype, node.imagetype, services[take[0]!]!);
      members.set(key, [...(members.get(key) ?? []), ...take].sort((a, b) => a - b));
    }
    placed.set(change.service, receivers.sort((a, b) => a - b));
  }
  const changedNodes: ChangedNode[] = [];
  nodes.forEach((n, i) => {
    if (added[i]!.length === 0) return;
    changedNodes.push({ id: n.id, nodenum: n.nodenum, addedServices: sortNames([...added[i]!]), services: services[i]! });
  });
  return {
    services: [...clusterServices, ...toAdd],
    changedNodes,
    placements: toAdd.map((s) => ({ service: s, nodeIds: (placed.get(s) ?? []).map((i) => nodes[i]!.id) })),
    stats: { steps, candidateLayouts: groupCount },
  };
}
