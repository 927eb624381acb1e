/** The export / import body (docs/api.md, Endpoints: `/export`, `/import`). */
import type { CatalogEntityByKind, CatalogKind, CatalogSnapshot } from "../entities.js";
import { BadRequestError, isCorralError } from "../errors.js";
import { parseClusterTemplate } from "./cluster-template.js";
import { parseMachineType } from "./machine-type.js";
import {
  child,
  describe,
  fail,
  getOwn,
  isAbsent,
  isObject,
  item,
  requireObject,
  type RawObject,
} from "./primitives.js";
import { parseProvider, type ProviderValidationContext } from "./provider.js";
import { parseService, type ServiceValidationContext } from "./service.js";

/** Everything catalog validation needs to know about the tenant's plugins. */
export interface ValidationContext extends ProviderValidationContext, ServiceValidationContext {}

type Parsers = { [K in CatalogKind]: (body: unknown, ctx: ValidationContext) => CatalogEntityByKind[K] };

const PARSERS: Parsers = {
  providers: (body, ctx) => parseProvider(body, ctx),
  hardwaretypes: (body) => parseMachineType(body),
  imagetypes: (body) => parseMachineType(body),
  services: (body, ctx) => parseService(body, ctx),
  clustertemplates: (body) => parseClusterTemplate(body),
};

/**
 * Validates an import body `{providers?, hardwaretypes?, imagetypes?, services?, clustertemplates?}` (each an
 * array, `[]` when absent; other keys such as `partialtemplates` are ignored). Every entity is validated as
 * on a single write; the first error names its location (`services[3] (name "foo"): ...`, field
 * `services[3].<path>`), and a name used twice within a kind is refused. Each list comes back sorted by name.
 * @throws BadRequestError naming the offending entity and field.
 */
export function parseCatalogSnapshot(body: unknown, ctx: ValidationContext): CatalogSnapshot {
  const obj = requireObject(body, "");
  return {
    providers: parseKind(obj, "providers", ctx),
    hardwaretypes: parseKind(obj, "hardwaretypes", ctx),
    imagetypes: parseKind(obj, "imagetypes", ctx),
    services: parseKind(obj, "services", ctx),
    clustertemplates: parseKind(obj, "clustertemplates", ctx),
  };
}

function parseKind<K extends CatalogKind>(obj: RawObject, kind: K, ctx: ValidationContext): CatalogEntityByKind[K][] {
  const raw = getOwn(obj, kind);
  if (isAbsent(raw)) return [];
  if (!Array.isArray(raw)) fail(kind, `must be an array (got ${describe(raw)})`);
  const parse: Parsers[K] = PARSERS[kind];
  const seen = new Map<string, number>();
  const entities = raw.map((entry: unknown, i): CatalogEntityByKind[K] => {
    const at = item(kind, i);
    if (!isObject(entry)) fail(at, `must be a JSON object (got ${describe(entry)})`);
    const entity = located(at, entry, () => parse(entry, ctx));
    const first = seen.get(entity.name);
    if (first !== undefined) {
      const message = `${at} (name ${describe(entity.name)}): name is a duplicate of ${item(kind, first)}`;
      throw new BadRequestError(message, { field: child(at, "name") });
    }
    seen.set(entity.name, i);
    return entity;
  });
  return entities.sort((a, b) => compareNames(a.name, b.name));
}

/** Code-unit order, so the result does not depend on the host locale. */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Runs `parse`, prefixing a 400's message with the entity's location and its field with the entity path. */
function located<T>(at: string, entry: RawObject, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (!isCorralError(err) || err.status !== 400) throw err;
    const name = getOwn(entry, "name");
    const where = typeof name === "string" ? `${at} (name ${describe(name)})` : at;
    const field = err.details?.["field"];
    const details = { ...err.details, field: typeof field === "string" ? `${at}.${field}` : at };
    throw new BadRequestError(`${where}: ${err.message}`, details, err.code);
  }
}
