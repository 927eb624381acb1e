/**
 * A template's constraints in the form the solvers use, and the node-level tests of Coopr's
 * `NodeLayoutGenerator.isValidServiceSet` and `NodeLayout.satisfiesServiceConstraints`
 * (docs/catalog.md, Cluster templates and constraints; Layout).
 */
import { BadRequestError, type ClusterTemplate } from "@corral/contracts";

export interface QuantityBounds {
  /** 0 when absent. */
  min: number;
  /** Infinity when absent. */
  max: number;
}

export interface NormalizedServiceConstraint extends QuantityBounds {
  /** null = any hardware type (absent or empty list). */
  hardwaretypes: ReadonlySet<string> | null;
  /** null = any image type. */
  imagetypes: ReadonlySet<string> | null;
}

export interface NormalizedConstraints {
  /** Inner sets with duplicates removed; empty sets dropped (they constrain nothing). */
  mustcoexist: readonly (readonly string[])[];
  /** Inner sets with duplicates removed; empty sets dropped (read literally, an empty one would forbid every node). */
  cantcoexist: readonly (readonly string[])[];
  services: ReadonlyMap<string, NormalizedServiceConstraint>;
  sizeMin: number;
  sizeMax: number;
}

/**
 * Reads a count. Stored templates carry integers; numeric strings (as Coopr catalogs write them) are accepted
 * too, so a template that slipped past validation still solves. Anything else is a 400 naming the field.
 */
function readCount(value: unknown, fallback: number, field: string): number {
  if (value === undefined || value === null) return fallback;
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0) {
    throw new BadRequestError(`template ${field} must be a non-negative integer, got ${JSON.stringify(value)}`, {
      constraint: field,
    });
  }
  return n;
}

function nonEmptySet(list: readonly string[] | undefined): ReadonlySet<string> | null {
  return list === undefined || list.length === 0 ? null : new Set(list);
}

function dedupeSets(sets: readonly (readonly string[])[] | undefined): string[][] {
  const out: string[][] = [];
  for (const set of sets ?? []) {
    const unique = [...new Set(set)];
    if (unique.length > 0) out.push(unique);
  }
  return out;
}

export function normalizeConstraints(template: ClusterTemplate): NormalizedConstraints {
  const c = template.constraints;
  const services = new Map<string, NormalizedServiceConstraint>();
  for (const [name, sc] of Object.entries(c?.services ?? {})) {
    const min = readCount(sc.quantities?.min, 0, `constraints.services.${name}.quantities.min`);
    const max = readCount(sc.quantities?.max, Infinity, `constraints.services.${name}.quantities.max`);
    services.set(name, {
      min,
      max,
      hardwaretypes: nonEmptySet(sc.hardwaretypes),
      imagetypes: nonEmptySet(sc.imagetypes),
    });
  }
  const sizeMin = readCount(c?.size?.min, 1, "constraints.size.min");
  const sizeMax = readCount(c?.size?.max, Infinity, "constraints.size.max");
  return {
    mustcoexist: dedupeSets(c?.layout?.mustcoexist),
    cantcoexist: dedupeSets(c?.layout?.cantcoexist),
    services,
    sizeMin,
    sizeMax,
  };
}

/**
 * Coopr's service-set test: no cantcoexist set wholly contained; for each mustcoexist set M, with
 * M' = M ∩ clusterServices, the set holds none or all of M'.
 */
export function isValidServiceSet(
  set: ReadonlySet<string>,
  constraints: NormalizedConstraints,
  clusterServices: ReadonlySet<string>,
): boolean {
  return firstServiceSetViolation(set, constraints, clusterServices) === undefined;
}

export type ServiceSetViolation =
  | { kind: "cantcoexist"; set: readonly string[] }
  | { kind: "mustcoexist"; set: readonly string[]; missing: string[] };

export function firstServiceSetViolation(
  set: ReadonlySet<string>,
  constraints: NormalizedConstraints,
  clusterServices: ReadonlySet<string>,
): ServiceSetViolation | undefined {
  for (const cant of constraints.cantcoexist) {
    if (cant.every((s) => set.has(s))) return { kind: "cantcoexist", set: cant };
  }
  for (const must of constraints.mustcoexist) {
    const present = must.filter((s) => clusterServices.has(s));
    if (present.some((s) => set.has(s))) {
      const missing = present.filter((s) => !set.has(s));
      if (missing.length > 0) return { kind: "mustcoexist", set: must, missing };
    }
  }
  return undefined;
}

/** Coopr's per-service hardware/image test for one node layout. */
export function firstTypeViolation(
  services: Iterable<string>,
  hardwaretype: string,
  imagetype: string,
  constraints: NormalizedConstraints,
): { kind: "hardwaretypes" | "imagetypes"; service: string; allowed: string[] } | undefined {
  for (const s of services) {
    const sc = constraints.services.get(s);
    if (sc === undefined) continue;
    if (sc.hardwaretypes !== null && !sc.hardwaretypes.has(hardwaretype)) {
      return { kind: "hardwaretypes", service: s, allowed: [...sc.hardwaretypes] };
    }
    if (sc.imagetypes !== null && !sc.imagetypes.has(imagetype)) {
      return { kind: "imagetypes", service: s, allowed: [...sc.imagetypes] };
    }
  }
  return undefined;
}

/** Plain code-unit string order, as Java's `String.compareTo` (never locale-aware). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Coopr's `NodeLayoutComparator` with no preference lists: more services first, then hardware type name,
 * image type name, then the sorted service names element by element.
 */
export function compareNodeLayouts(
  a: { services: readonly string[]; hardwaretype: string; imagetype: string },
  b: { services: readonly string[]; hardwaretype: string; imagetype: string },
): number {
  if (a.services.length !== b.services.length) return b.services.length - a.services.length;
  const hw = compareStrings(a.hardwaretype, b.hardwaretype);
  if (hw !== 0) return hw;
  const img = compareStrings(a.imagetype, b.imagetype);
  if (img !== 0) return img;
  for (let i = 0; i < a.services.length; i++) {
    const c = compareStrings(a.services[i] as string, b.services[i] as string);
    if (c !== 0) return c;
  }
  return 0;
}

/** Identity of a node layout: hardware type, image type and the sorted service names. */
export function nodeLayoutKey(hardwaretype: string, imagetype: string, sortedServices: readonly string[]): string {
  return `${hardwaretype}\u0000${imagetype}\u0000${sortedServices.join("\u0000")}`;
}

/** Sorts names in place with {@link compareStrings} and returns the array. */
export function sortNames<T extends string[]>(names: T): T {
  return names.sort(compareStrings);
}

/** "at most 1 node", "2 to 5 nodes": bounds with the noun, for messages. */
export function describeNodes(b: QuantityBounds): string {
  const last = b.max === Infinity ? b.min : b.max;
  return `${describeBounds(b)} node${last === 1 ? "" : "s"}`;
}

/** `min..max` for messages. */
export function describeBounds(b: QuantityBounds): string {
  if (b.max === Infinity) return `at least ${b.min}`;
  if (b.min === 0) return `at most ${b.max}`;
  if (b.min === b.max) return `exactly ${b.min}`;
  return `${b.min} to ${b.max}`;
}
