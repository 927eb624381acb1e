/** Cluster templates (docs/catalog.md, Cluster templates and constraints). */
import { clusterTemplateWriteSchema } from "../endpoints/entity-schemas.js";
import type { ClusterTemplate, LeaseDuration, TemplateCompatibility, TemplateConstraints } from "../entities.js";
import { bodyValidator } from "./check.js";
import { child, fail, item } from "./primitives.js";

const validate = bodyValidator(clusterTemplateWriteSchema);

/**
 * Validates a cluster template and returns its canonical form. The shape is the declaration's
 * (clusterTemplateWriteSchema: required `compatibility` and `defaults`, optional `constraints` and `administration`,
 * integers also as numeric strings, lease durations also as `"10s"`, `"15m"`, `"2h"`, `"1d"`); the rules that reach
 * across its sections are here:
 *
 * - `defaults.services`, `defaults.hardwaretype` and `defaults.imagetype` lie within their compatibility list when
 *   that is non-empty (an empty list allows anything, as in Coopr);
 * - `size.max` >= `size.min` (1 when absent), `quantities.max` >= `quantities.min` (0 when absent);
 * - a mustcoexist set names at least one distinct service, a cantcoexist set two;
 * - `leaseduration.max` is 0 (unlimited) or >= `initial`, and 0 when `initial` is 0 (unlimited).
 *
 * Optional levels are kept only when given; key order is name, description, compatibility, defaults,
 * constraints, administration.
 * @throws BadRequestError naming the offending field.
 */
export function parseClusterTemplate(body: unknown): ClusterTemplate {
  return checkClusterTemplate(validate(body));
}

/**
 * The rules that reach across a template's sections (listed at parseClusterTemplate), for a template its declaration
 * has already checked and decoded, as a catalog write's endpoint row does: returns `template` itself.
 * @throws BadRequestError naming the offending field.
 */
export function checkClusterTemplate(template: ClusterTemplate): ClusterTemplate {
  checkDefaults(template);
  if (template.constraints) checkConstraints(template.constraints, "constraints");
  if (template.administration) checkLease(template.administration.leaseduration, "administration.leaseduration");
  return template;
}

/** An empty compatibility list allows anything. */
function isAllowed(list: readonly string[], name: string): boolean {
  return list.length === 0 || list.includes(name);
}

function checkDefaults({ compatibility, defaults }: ClusterTemplate): void {
  const outside = defaults.services.find((s) => !isAllowed(compatibility.services, s));
  if (outside !== undefined) {
    fail("defaults.services", `must be a subset of compatibility.services (${JSON.stringify(outside)} is not listed)`);
  }
  for (const key of ["hardwaretype", "imagetype"] as const) {
    const name = defaults[key];
    const allowed: TemplateCompatibility[`${typeof key}s`] = compatibility[`${key}s`];
    if (name !== undefined && !isAllowed(allowed, name)) {
      fail(`defaults.${key}`, `must be one of compatibility.${key}s (got ${JSON.stringify(name)})`);
    }
  }
}

function checkConstraints(constraints: TemplateConstraints, path: string): void {
  if (constraints.size) checkRange(constraints.size, child(path, "size"), "size", 1);
  const { mustcoexist = [], cantcoexist = [] } = constraints.layout ?? {};
  checkNameGroups(mustcoexist, child(path, "layout.mustcoexist"), 1);
  checkNameGroups(cantcoexist, child(path, "layout.cantcoexist"), 2);
  for (const [service, constraint] of Object.entries(constraints.services ?? {})) {
    const at = child(child(path, "services"), service);
    if (constraint.quantities) checkRange(constraint.quantities, child(at, "quantities"), "quantities", 0);
  }
}

/** `max >= min`, `min` counting as `minimum` when absent; `rangeName` (`size`, `quantities`) names `min` in the message. */
function checkRange(range: { min?: number; max?: number }, path: string, rangeName: string, minimum: number): void {
  const floor = range.min ?? minimum;
  if (range.max !== undefined && range.max < floor) fail(child(path, "max"), `must be >= ${rangeName}.min (${floor})`);
}

/** Each set (after dropping repeats) names at least `minSize` services. */
function checkNameGroups(groups: readonly string[][], path: string, minSize: number): void {
  groups.forEach((group, i) => {
    const distinct = new Set(group).size;
    if (distinct < minSize) {
      fail(item(path, i), `must name at least ${minSize} distinct service${minSize === 1 ? "" : "s"} (got ${distinct})`);
    }
  });
}

/** 0 means unlimited for `initial` and `max`. */
function asLimit(ms: number): number {
  return ms === 0 ? Number.POSITIVE_INFINITY : ms;
}

/**
 * Coopr's rule: with 0 read as infinity, max may not be below initial (so an unlimited initial lease cannot have a
 * finite max, while any initial may have an unlimited max).
 */
function checkLease({ initial, max }: LeaseDuration, path: string): void {
  if (asLimit(max) >= asLimit(initial)) return;
  const why = initial === 0 ? "0 (unlimited) when initial is 0 (unlimited)" : `>= initial (${initial}) or 0 (unlimited)`;
  fail(child(path, "max"), `must be ${why} (got ${max})`);
}
