/**
 * Service dependency resolution on one cluster (docs/catalog.md, Services and dependencies): `provides`
 * replacement, requires ∪ uses per kind restricted to the services on the cluster, transitive closures and cycle
 * detection.
 */
import { type Service, BadRequestError } from "@corral/contracts";
import type { DependencyKind } from "./actions.js";

/** Dependencies of the services on one cluster, resolved once and queried by the planner. */
export interface ClusterDependencies {
  /** Names of the services on at least one node. */
  readonly clusterServices: readonly string[];
  /** Direct dependencies of `service` (requires ∪ uses, providers substituted, on the cluster, sorted). */
  direct(kind: DependencyKind, service: string): readonly string[];
  /** Every service `service` depends on, directly or transitively (never itself). */
  closure(kind: DependencyKind, service: string): ReadonlySet<string>;
  /** Every service that depends on `service`, directly or transitively (never itself). */
  dependents(kind: DependencyKind, service: string): ReadonlySet<string>;
}

const EMPTY: ReadonlySet<string> = new Set();

function listsOf(service: Service, kind: DependencyKind): readonly string[] {
  // Stored services always carry complete dependencies; stay tolerant of hand-built ones anyway.
  const deps = service.dependencies as Partial<Service["dependencies"]> | undefined;
  const ordering = deps?.[kind];
  return [...(ordering?.requires ?? []), ...(ordering?.uses ?? [])];
}

/**
 * Resolves the dependency graphs of the services in `clusterServices`.
 * A name that some cluster service `provides` stands for all its providers (a real service of that name is then
 * dropped in favour of them); names not on the cluster are ignored (`uses` are soft, `requires` were validated
 * when the services were placed). Self-dependencies are ignored.
 * @throws BadRequestError `dependency_cycle` when install or runtime dependencies form a cycle.
 */
export function resolveClusterDependencies(
  clusterServices: readonly string[],
  definitions: ReadonlyMap<string, Service>,
): ClusterDependencies {
  const onCluster = new Set(clusterServices);
  const providers = new Map<string, string[]>();
  for (const name of clusterServices) {
    const def = definitions.get(name);
    const deps = def?.dependencies as Partial<Service["dependencies"]> | undefined;
    for (const provided of deps?.provides ?? []) {
      if (provided === name) continue; // a service providing its own name changes nothing
      const list = providers.get(provided);
      if (list) list.push(name);
      else providers.set(provided, [name]);
    }
  }
  const resolveName = (dep: string): readonly string[] =>
    providers.get(dep) ?? (onCluster.has(dep) ? [dep] : []);

  const direct: Record<DependencyKind, Map<string, string[]>> = { install: new Map(), runtime: new Map() };
  for (const kind of ["install", "runtime"] as const) {
    for (const name of clusterServices) {
      const def = definitions.get(name);
      const out = new Set<string>();
      if (def) {
        for (const dep of listsOf(def, kind)) {
          for (const resolved of resolveName(dep)) if (resolved !== name) out.add(resolved);
        }
      }
      direct[kind].set(name, [...out].sort());
    }
  }

  const closures: Record<DependencyKind, Map<string, Set<string>>> = { install: new Map(), runtime: new Map() };
  const reverse: Record<DependencyKind, Map<string, Set<string>>> = { install: new Map(), runtime: new Map() };
  for (const kind of ["install", "runtime"] as const) {
    const memo = closures[kind];
    const onStack: string[] = [];
    const visiting = new Set<string>();
    const visit = (name: string): Set<string> => {
      const done = memo.get(name);
      if (done) return done;
      if (visiting.has(name)) {
        const cycle = [...onStack.slice(onStack.indexOf(name)), name];
        throw new BadRequestError(
          `service dependencies form a cycle (${kind}): ${cycle.join(" -> ")}`,
          { kind, cycle },
          "dependency_cycle",
        );
      }
      visiting.add(name);
      onStack.push(name);
      const result = new Set<string>();
      for (const dep of direct[kind].get(name) ?? []) {
        result.add(dep);
        for (const transitive of visit(dep)) result.add(transitive);
      }
      onStack.pop();
      visiting.delete(name);
      memo.set(name, result);
      return result;
    };
    for (const name of clusterServices) visit(name);
    for (const name of clusterServices) {
      for (const dep of memo.get(name) ?? EMPTY) {
        const set = reverse[kind].get(dep);
        if (set) set.add(name);
        else reverse[kind].set(dep, new Set([name]));
      }
    }
  }

  return {
    clusterServices,
    direct: (kind, service) => direct[kind].get(service) ?? [],
    closure: (kind, service) => closures[kind].get(service) ?? EMPTY,
    dependents: (kind, service) => reverse[kind].get(service) ?? EMPTY,
  };
}
