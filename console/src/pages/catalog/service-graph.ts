/**
 * The services' dependency graph, laid out by level: a service that depends on nothing is level 0, any other one
 * level above the highest service it requires or uses. Within a level, services sit near what they depend on.
 * Pure: dependency-graph.ts draws it.
 */
import type { Service } from "@corral/contracts";

export type EdgeKind = "requires" | "uses" | "conflicts";

export interface GraphNode {
  name: string;
  level: number;
  /** Position within its level, from 0. */
  row: number;
  /** Named as a dependency, but no service has or provides that name. */
  missing: boolean;
}

/** `from` requires or uses `to` (install or runtime); for conflicts, the two names in order. */
export interface GraphEdge {
  from: string;
  to: string;
  kind: EdgeKind;
  /** `from` also reaches `to` through another of its dependencies (e.g. everything on `base`): drawn on demand. */
  implied: boolean;
}

export interface ServiceGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Number of levels. */
  levels: number;
}

/**
 * A dependency on `name` is drawn to the service of that name, else to every service providing it (docs/catalog.md,
 * Services and dependencies: `provides`).
 */
function resolver(services: readonly Service[]): (name: string) => string[] {
  const names = new Set(services.map((s) => s.name));
  return (name) => (names.has(name) ? [name] : services.filter((s) => s.dependencies.provides.includes(name)).map((s) => s.name));
}

function edgesOf(services: readonly Service[]): { edges: GraphEdge[]; missing: Set<string> } {
  const resolve = resolver(services);
  const missing = new Set<string>();
  const edges: GraphEdge[] = [];
  const seen = new Set<string>();
  const add = (edge: GraphEdge) => {
    const key = `${edge.from}\n${edge.to}`;
    if (seen.has(key)) return;
    seen.add(key);
    edges.push(edge);
  };
  for (const s of services) {
    const { install, runtime, conflicts } = s.dependencies;
    // Requires first, so a service both required and used is drawn as required.
    for (const [kind, names] of [["requires", [...install.requires, ...runtime.requires]], ["uses", [...install.uses, ...runtime.uses]]] as const) {
      for (const name of names) {
        const targets = resolve(name);
        if (targets.length === 0) missing.add(name);
        for (const to of targets.length ? targets : [name]) if (to !== s.name) add({ from: s.name, to, kind, implied: false });
      }
    }
    for (const other of conflicts) {
      if (other === s.name || !services.some((x) => x.name === other)) continue;
      const [a, b] = [s.name, other].sort() as [string, string];
      add({ from: a, to: b, kind: "conflicts", implied: false });
    }
  }
  return { edges, missing };
}

/** Marks each dependency edge that another path of dependencies already implies (a transitive reduction). */
function markImplied(edges: GraphEdge[], dependsOn: ReadonlyMap<string, readonly string[]>): void {
  const reach = new Map<string, Set<string>>();
  const reachable = (name: string, visiting = new Set<string>()): Set<string> => {
    const known = reach.get(name);
    if (known) return known;
    const result = new Set<string>();
    visiting.add(name);
    for (const next of dependsOn.get(name) ?? []) {
      if (visiting.has(next)) continue;
      result.add(next);
      for (const further of reachable(next, visiting)) result.add(further);
    }
    visiting.delete(name);
    reach.set(name, result);
    return result;
  };
  for (const e of edges) {
    if (e.kind === "conflicts") continue;
    e.implied = (dependsOn.get(e.from) ?? []).some((other) => other !== e.to && reachable(other).has(e.to));
  }
}

export function serviceGraph(services: readonly Service[]): ServiceGraph {
  const { edges, missing } = edgesOf(services);
  const dependsOn = new Map<string, string[]>();
  for (const e of edges) if (e.kind !== "conflicts") dependsOn.set(e.from, [...(dependsOn.get(e.from) ?? []), e.to]);
  markImplied(edges, dependsOn);

  const level = new Map<string, number>();
  const visiting = new Set<string>();
  const levelOf = (name: string): number => {
    const known = level.get(name);
    if (known !== undefined) return known;
    if (visiting.has(name)) return 0; // a cycle: the validator should refuse it; drawn, not looped over
    visiting.add(name);
    const value = Math.max(-1, ...(dependsOn.get(name) ?? []).map(levelOf)) + 1;
    visiting.delete(name);
    level.set(name, value);
    return value;
  };
  const names = [...services.map((s) => s.name), ...missing].sort();
  const levels = Math.max(0, ...names.map((n) => levelOf(n) + 1));

  const row = new Map<string, number>();
  const nodes: GraphNode[] = [];
  for (let l = 0; l < levels; l++) {
    const barycenter = (name: string) => {
      const rows = (dependsOn.get(name) ?? []).map((t) => row.get(t)).filter((r): r is number => r !== undefined);
      return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : 0;
    };
    const here = names.filter((n) => level.get(n) === l).sort((a, b) => barycenter(a) - barycenter(b) || a.localeCompare(b));
    here.forEach((name, i) => {
      row.set(name, i);
      nodes.push({ name, level: l, row: i, missing: missing.has(name) });
    });
  }
  return { nodes, edges, levels };
}
