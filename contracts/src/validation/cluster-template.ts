/** Cluster templates (docs/catalog.md, Cluster templates and constraints). */
import type {
  ClusterTemplate,
  LeaseDuration,
  ServiceConstraint,
  TemplateCompatibility,
  TemplateConstraints,
  TemplateDefaults,
  TemplateRepair,
} from "../entities.js";
import {
  checkNameKey,
  child,
  describe,
  fail,
  getOwn,
  isAbsent,
  item,
  optionalInteger,
  optionalName,
  optionalNameList,
  optionalObject,
  optionalString,
  parseBoolean,
  parseDurationMs,
  parseInteger,
  parseJsonObject,
  parseName,
  parseNameList,
  requireObject,
  setOwn,
  type RawObject,
} from "./primitives.js";

const DNS_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const DNS_MAX_LENGTH = 253;

/**
 * Validates a cluster template and returns its canonical form.
 *
 * - `compatibility` (required): `hardwaretypes`, `imagetypes`, `services` name lists, each `[]` when absent.
 *   An empty list means "no restriction" for that category, as in Coopr.
 * - `defaults` (required): `services` (a subset of `compatibility.services` when that is non-empty),
 *   `provider`, `config` (a JSON object), optional `hardwaretype` / `imagetype` (in the compatibility list
 *   when that is non-empty) and `dnsSuffix` (a valid DNS suffix).
 * - `constraints` (optional): `size {min >= 1, max >= min}`, `layout {mustcoexist, cantcoexist}` (lists of
 *   name lists; a cantcoexist set names at least two services), per-service `hardwaretypes`, `imagetypes`,
 *   `quantities {min >= 0, max >= min}`. Integers may be given as numeric strings.
 * - `administration` (optional): `leaseduration {initial, max, step}` in ms (or `"10s"`, `"15m"`, `"2h"`,
 *   `"1d"`), missing members 0; 0 means unlimited for `initial` and `max`, and `max` may not be below `initial`.
 *
 * Optional levels are kept only when given; key order is name, description, compatibility, defaults,
 * constraints, administration.
 * @throws BadRequestError naming the offending field.
 */
export function parseClusterTemplate(body: unknown): ClusterTemplate {
  const obj = requireObject(body, "");
  const name = parseName(getOwn(obj, "name"), "name");
  const description = optionalString(getOwn(obj, "description"), "description");
  const compatibility = parseCompatibility(getOwn(obj, "compatibility"), "compatibility");
  const defaults = parseDefaults(getOwn(obj, "defaults"), "defaults", compatibility);
  const constraints = optionalObject(getOwn(obj, "constraints"), "constraints");
  const template: ClusterTemplate = {
    name,
    ...(description === undefined ? {} : { description }),
    compatibility,
    defaults,
    ...(constraints === undefined ? {} : { constraints: parseConstraints(constraints, "constraints") }),
  };
  const administration = optionalObject(getOwn(obj, "administration"), "administration");
  if (administration !== undefined) {
    const repair = optionalObject(getOwn(administration, "repair"), "administration.repair");
    template.administration = {
      leaseduration: parseLeaseDuration(administration, "administration"),
      ...(repair === undefined ? {} : { repair: parseRepair(repair, "administration.repair") }),
    };
  }
  return template;
}

// ---------------------------------------------------------------------------------------------------------------
// compatibility and defaults

function parseCompatibility(value: unknown, path: string): TemplateCompatibility {
  const obj = requireObject(value, path);
  return {
    hardwaretypes: optionalNameList(getOwn(obj, "hardwaretypes"), child(path, "hardwaretypes")) ?? [],
    imagetypes: optionalNameList(getOwn(obj, "imagetypes"), child(path, "imagetypes")) ?? [],
    services: optionalNameList(getOwn(obj, "services"), child(path, "services")) ?? [],
  };
}

/** An empty compatibility list allows anything. */
function isAllowed(list: readonly string[], name: string): boolean {
  return list.length === 0 || list.includes(name);
}

function parseDefaults(value: unknown, path: string, compatibility: TemplateCompatibility): TemplateDefaults {
  const obj = requireObject(value, path);
  const services = parseNameList(getOwn(obj, "services"), child(path, "services"));
  const outside = services.find((s) => !isAllowed(compatibility.services, s));
  if (outside !== undefined) {
    fail(
      child(path, "services"),
      `must be a subset of compatibility.services (${JSON.stringify(outside)} is not listed)`,
    );
  }
  const defaults: TemplateDefaults = {
    services,
    provider: parseName(getOwn(obj, "provider"), child(path, "provider")),
    config: parseJsonObject(getOwn(obj, "config"), child(path, "config")),
  };
  const hardwaretype = parseCompatibleName(obj, path, "hardwaretype", compatibility.hardwaretypes);
  if (hardwaretype !== undefined) defaults.hardwaretype = hardwaretype;
  const imagetype = parseCompatibleName(obj, path, "imagetype", compatibility.imagetypes);
  if (imagetype !== undefined) defaults.imagetype = imagetype;
  const dnsSuffix = optionalString(getOwn(obj, "dnsSuffix"), child(path, "dnsSuffix"));
  if (dnsSuffix !== undefined) defaults.dnsSuffix = checkDnsSuffix(dnsSuffix, child(path, "dnsSuffix"));
  return defaults;
}

/** `defaults.hardwaretype` / `defaults.imagetype`: optional, and in `compatibility.<key>s` when that is non-empty. */
function parseCompatibleName(
  obj: RawObject,
  path: string,
  key: string,
  allowed: readonly string[],
): string | undefined {
  const name = optionalName(getOwn(obj, key), child(path, key));
  if (name !== undefined && !isAllowed(allowed, name)) {
    fail(child(path, key), `must be one of compatibility.${key}s (got ${JSON.stringify(name)})`);
  }
  return name;
}

/** A DNS suffix: dot-separated labels of 1-63 letters, digits and '-', not starting or ending with '-'. */
function checkDnsSuffix(suffix: string, path: string): string {
  const problem = `must be a DNS suffix such as "example.com"`;
  if (suffix.length > DNS_MAX_LENGTH) {
    fail(path, `${problem} (at most ${DNS_MAX_LENGTH} characters, got ${suffix.length})`);
  }
  const bad = suffix.split(".").find((label) => !DNS_LABEL.test(label));
  if (bad !== undefined) {
    const why = bad === "" ? "an empty label" : `label ${JSON.stringify(bad)}`;
    fail(path, `${problem}: labels are 1-63 letters, digits or '-', not starting or ending with '-' (${why})`);
  }
  return suffix;
}

// ---------------------------------------------------------------------------------------------------------------
// constraints

function parseConstraints(obj: RawObject, path: string): TemplateConstraints {
  const out: TemplateConstraints = {};
  const size = optionalObject(getOwn(obj, "size"), child(path, "size"));
  if (size !== undefined) out.size = parseSize(size, child(path, "size"));
  const layout = optionalObject(getOwn(obj, "layout"), child(path, "layout"));
  if (layout !== undefined) out.layout = parseLayout(layout, child(path, "layout"));
  const services = optionalObject(getOwn(obj, "services"), child(path, "services"));
  if (services !== undefined) out.services = parseServiceConstraints(services, child(path, "services"));
  return out;
}

/**
 * `{min?, max?}` with `min >= minimum` and `max >= min` (`min` counting as `minimum` when absent).
 * `rangeName` is the last path segment (`size`, `quantities`), used to name `min` in the message.
 */
function parseRange(obj: RawObject, path: string, rangeName: string, minimum: number): { min?: number; max?: number } {
  const min = optionalInteger(getOwn(obj, "min"), child(path, "min"), { min: minimum });
  const max = optionalInteger(getOwn(obj, "max"), child(path, "max"));
  const floor = min ?? minimum;
  if (max !== undefined && max < floor) fail(child(path, "max"), `must be >= ${rangeName}.min (${floor})`);
  return { ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) };
}

function parseSize(obj: RawObject, path: string): NonNullable<TemplateConstraints["size"]> {
  return parseRange(obj, path, "size", 1);
}

function parseLayout(obj: RawObject, path: string): NonNullable<TemplateConstraints["layout"]> {
  const out: NonNullable<TemplateConstraints["layout"]> = {};
  const mustcoexist = getOwn(obj, "mustcoexist");
  if (!isAbsent(mustcoexist)) out.mustcoexist = parseNameGroups(mustcoexist, child(path, "mustcoexist"), 1);
  const cantcoexist = getOwn(obj, "cantcoexist");
  if (!isAbsent(cantcoexist)) out.cantcoexist = parseNameGroups(cantcoexist, child(path, "cantcoexist"), 2);
  return out;
}

/** An array of name sets, each (after dropping duplicates) with at least `minSize` names. */
function parseNameGroups(value: unknown, path: string, minSize: number): string[][] {
  if (!Array.isArray(value)) fail(path, `must be an array of arrays of names (got ${describe(value)})`);
  return value.map((group: unknown, i) => {
    const names = parseNameList(group, item(path, i));
    const distinct = new Set(names).size;
    if (distinct < minSize) {
      fail(item(path, i), `must name at least ${minSize} distinct service${minSize === 1 ? "" : "s"} (got ${distinct})`);
    }
    return names;
  });
}

function parseServiceConstraints(obj: RawObject, path: string): Record<string, ServiceConstraint> {
  const out: Record<string, ServiceConstraint> = {};
  for (const [service, value] of Object.entries(obj)) {
    if (value === undefined) continue;
    checkNameKey(service, path);
    setOwn(out, service, parseServiceConstraint(value, child(path, service)));
  }
  return out;
}

function parseServiceConstraint(value: unknown, path: string): ServiceConstraint {
  const obj = requireObject(value, path);
  const out: ServiceConstraint = {};
  const hardwaretypes = optionalNameList(getOwn(obj, "hardwaretypes"), child(path, "hardwaretypes"));
  if (hardwaretypes !== undefined) out.hardwaretypes = hardwaretypes;
  const imagetypes = optionalNameList(getOwn(obj, "imagetypes"), child(path, "imagetypes"));
  if (imagetypes !== undefined) out.imagetypes = imagetypes;
  const quantities = optionalObject(getOwn(obj, "quantities"), child(path, "quantities"));
  if (quantities !== undefined) out.quantities = parseRange(quantities, child(path, "quantities"), "quantities", 0);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// administration

/** 0 means unlimited for `initial` and `max`. */
function asLimit(ms: number): number {
  return ms === 0 ? Number.POSITIVE_INFINITY : ms;
}

function parseRepair(obj: RawObject, path: string): TemplateRepair {
  const auto = getOwn(obj, "auto");
  if (auto === undefined) fail(child(path, "auto"), "is required");
  return {
    auto: parseBoolean(auto, child(path, "auto"), false),
    afterSeconds: parseInteger(getOwn(obj, "afterSeconds"), child(path, "afterSeconds"), { min: 1 }),
  };
}

function parseLeaseDuration(obj: RawObject, path: string): LeaseDuration {
  const leasePath = child(path, "leaseduration");
  const raw = getOwn(obj, "leaseduration");
  if (isAbsent(raw)) fail(leasePath, "is required when administration is given");
  const lease = requireObject(raw, leasePath);
  const initial = parseDurationMs(getOwn(lease, "initial"), child(leasePath, "initial"));
  const max = parseDurationMs(getOwn(lease, "max"), child(leasePath, "max"));
  const step = parseDurationMs(getOwn(lease, "step"), child(leasePath, "step"));
  // Coopr's rule: with 0 read as infinity, max may not be below initial (so an unlimited initial lease
  // cannot have a finite max, while any initial may have an unlimited max).
  if (asLimit(max) < asLimit(initial)) {
    const why =
      initial === 0 ? "0 (unlimited) when initial is 0 (unlimited)" : `>= initial (${initial}) or 0 (unlimited)`;
    fail(child(leasePath, "max"), `must be ${why} (got ${max})`);
  }
  return { initial, max, step };
}
