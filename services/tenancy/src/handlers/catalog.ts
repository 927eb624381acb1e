import {
  BadRequestError,
  NotFoundError,
  checkClusterTemplate,
  describeValue,
  mergeProviderUpdate,
  parseMachineType,
  parseProvider,
  parseService,
  type CatalogEntity,
  type CatalogKind,
  type ClusterTemplate,
  type Identity,
  type Provider,
  type ValidationContext,
} from "@corral/contracts";
import type { EndpointHandler, EndpointHandlers } from "@corral/shared";
import type { CatalogStore } from "../adapters/catalog-store.js";
import type { RegistryStore } from "../adapters/registry-store.js";
import { providersSeenBy, withStoredSecrets } from "../provider-secrets.js";
import { loadValidationContext, type CatalogWriteContext } from "../validation-context.js";

/**
 * How each kind's write body, as its endpoint row decoded it, becomes an entity, and how the kind is named in
 * messages. A template's row declares it whole (clusterTemplateWriteSchema, on update with the path's name put
 * first), so only the rules across its sections are left; the other kinds are parsed whole (their update rows declare
 * only an object naming them, and providers and services need the tenant's plugin types).
 */
const KINDS: Record<CatalogKind, { noun: string; parse: (body: unknown, ctx: ValidationContext) => CatalogEntity }> = {
  providers: { noun: "provider", parse: (b, ctx) => parseProvider(b, ctx) },
  hardwaretypes: { noun: "hardware type", parse: (b) => parseMachineType(b) },
  imagetypes: { noun: "image type", parse: (b) => parseMachineType(b) },
  services: { noun: "service", parse: (b, ctx) => parseService(b, ctx) },
  clustertemplates: { noun: "cluster template", parse: (b) => checkClusterTemplate(b as ClusterTemplate) },
};

export interface CatalogHandlerDeps {
  catalog: CatalogStore;
  registry: RegistryStore;
}

/**
 * A PUT body takes its name from the path; a different name in the body is a 400. The name comes first, where every
 * kind's canonical key order has it, so a body the row decoded in that order keeps it.
 */
function withPathName(body: { name?: string }, name: string, noun: string): Record<string, unknown> {
  if (body.name !== undefined && body.name !== name) {
    throw new BadRequestError(`${noun} name in body (${describeValue(body.name)}) does not match name in path (${name})`, {
      field: "name",
    });
  }
  return { name, ...body };
}

type CatalogOperation = "list" | "get" | "create" | "update" | "delete";

/** The five handlers of a catalog kind; every kind's endpoints take and answer the same types. */
type CatalogKindHandlers = { [Op in CatalogOperation]: EndpointHandler<`tenancy.catalog.${CatalogKind}.${Op}`> };

/** CRUD handlers of one catalog kind, keyed by endpoint name. */
export function catalogHandlers(kind: CatalogKind, deps: CatalogHandlerDeps): EndpointHandlers<"tenancy"> {
  const { catalog, registry } = deps;
  const { noun, parse } = KINDS[kind];
  const needsContext = kind === "providers" || kind === "services";
  const context = async (): Promise<CatalogWriteContext> =>
    needsContext
      ? loadValidationContext(registry)
      : { isProviderType: () => false, automatorType: () => undefined, providerSpecs: new Map() };
  /** Entities as the caller may see them: providers' secret fields only for the tenant admin. */
  const shown = async (req: { identity: Identity }, entities: CatalogEntity[]): Promise<CatalogEntity[]> =>
    kind === "providers" ? providersSeenBy(req.identity, entities as Provider[], registry) : entities;
  /** A parsed write: a provider's secret fields given back redacted keep their stored values. */
  const parseWrite = (body: unknown, ctx: CatalogWriteContext, stored: CatalogEntity | undefined): CatalogEntity => {
    const entity = parse(body, ctx);
    return kind === "providers" ? withStoredSecrets(entity as Provider, stored as Provider | undefined, ctx.providerSpecs) : entity;
  };

  const handlers: CatalogKindHandlers = {
    list: async (req) => shown(req, await catalog.list(req.identity.tenant, kind)),

    get: async (req) => {
      const { name } = req.params;
      const found = await catalog.get(req.identity.tenant, kind, name);
      if (!found) throw new NotFoundError(noun, name);
      const [visible = found.value] = await shown(req, [found.value]);
      return visible;
    },

    create: async (req) => {
      const entity = parseWrite(req.body, await context(), undefined);
      if (!(await catalog.create(req.identity.tenant, kind, entity))) {
        throw new BadRequestError(`${noun} ${entity.name} already exists`, { field: "name" }, "already_exists");
      }
      return entity;
    },

    update: async (req) => {
      const { name } = req.params;
      const body = withPathName(req.body, name, noun);
      const ctx = await context();
      const updated = await catalog.modify(req.identity.tenant, kind, name, (current) => {
        if (!current) throw new BadRequestError(`${noun} ${name} does not exist`, undefined, "not_found");
        const merged = kind === "providers" ? mergeProviderUpdate(current.value as Provider, body) : body;
        return { put: parseWrite(merged, ctx, current.value) };
      });
      // A write that puts answers what it put; only a deletion answers nothing.
      if (!updated) throw new NotFoundError(noun, name);
      return updated;
    },

    delete: async (req) => {
      const { name } = req.params;
      const found = await catalog.get(req.identity.tenant, kind, name);
      if (!found) throw new NotFoundError(noun, name);
      await catalog.remove(req.identity.tenant, kind, name);
    },
  };
  // Only the keys change (`list` -> `tenancy.catalog.<kind>.list`); TypeScript cannot follow a renaming through fromEntries.
  return Object.fromEntries(Object.entries(handlers).map(([op, handler]) => [`tenancy.catalog.${kind}.${op}`, handler])) as EndpointHandlers<"tenancy">;
}
