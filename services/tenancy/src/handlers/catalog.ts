import {
  BadRequestError,
  NotFoundError,
  describeValue,
  mergeProviderUpdate,
  parseClusterTemplate,
  parseMachineType,
  parseName,
  parseProvider,
  parseService,
  subjects,
  type ApiRequest,
  type CatalogEntity,
  type CatalogKind,
  type Handler,
  type Provider,
  type ValidationContext,
} from "@corral/shared";
import type { CatalogStore } from "../adapters/catalog-store.js";
import type { RegistryStore } from "../adapters/registry-store.js";
import { providersSeenBy, withStoredSecrets } from "../provider-secrets.js";
import { loadValidationContext, type CatalogWriteContext } from "../validation-context.js";

/** How each kind is parsed and named in messages. */
const KINDS: Record<CatalogKind, { noun: string; parse: (body: unknown, ctx: ValidationContext) => CatalogEntity }> = {
  providers: { noun: "provider", parse: (b, ctx) => parseProvider(b, ctx) },
  hardwaretypes: { noun: "hardware type", parse: (b) => parseMachineType(b) },
  imagetypes: { noun: "image type", parse: (b) => parseMachineType(b) },
  services: { noun: "service", parse: (b, ctx) => parseService(b, ctx) },
  clustertemplates: { noun: "cluster template", parse: (b) => parseClusterTemplate(b) },
};

export interface CatalogHandlerDeps {
  catalog: CatalogStore;
  registry: RegistryStore;
}

function requireObjectBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new BadRequestError("body must be a JSON object");
  }
  return body as Record<string, unknown>;
}

/** A PUT body takes its name from the path; a different name in the body is a 400. */
function withPathName(body: unknown, name: string, noun: string): Record<string, unknown> {
  const obj = requireObjectBody(body);
  if (obj["name"] !== undefined && obj["name"] !== name) {
    throw new BadRequestError(`${noun} name in body (${describeValue(obj["name"])}) does not match name in path (${name})`, {
      field: "name",
    });
  }
  return { ...obj, name };
}

/** CRUD handlers of one catalog kind, keyed by subject. */
export function catalogHandlers(kind: CatalogKind, deps: CatalogHandlerDeps): Record<string, Handler> {
  const { catalog, registry } = deps;
  const { noun, parse } = KINDS[kind];
  const s = subjects.tenancy.catalog[kind];
  const needsContext = kind === "providers" || kind === "services";
  const context = async (): Promise<CatalogWriteContext> =>
    needsContext
      ? loadValidationContext(registry)
      : { isProviderType: () => false, automatorType: () => undefined, providerSpecs: new Map() };
  /** Entities as the caller may see them: providers' secret fields only for the tenant admin. */
  const shown = async (req: ApiRequest, entities: CatalogEntity[]): Promise<CatalogEntity[]> =>
    kind === "providers" ? providersSeenBy(req.identity, entities as Provider[], registry) : entities;
  /** A parsed write: a provider's secret fields given back redacted keep their stored values. */
  const parseWrite = (body: unknown, ctx: CatalogWriteContext, stored: CatalogEntity | undefined): CatalogEntity => {
    const entity = parse(body, ctx);
    return kind === "providers" ? withStoredSecrets(entity as Provider, stored as Provider | undefined, ctx.providerSpecs) : entity;
  };

  return {
    [s.list]: async (req: ApiRequest) => shown(req, await catalog.list(req.identity.tenant, kind)),

    [s.get]: async (req: ApiRequest) => {
      const name = parseName(req.params["name"], "name");
      const found = await catalog.get(req.identity.tenant, kind, name);
      if (!found) throw new NotFoundError(noun, name);
      return (await shown(req, [found.value]))[0];
    },

    [s.create]: async (req: ApiRequest) => {
      const entity = parseWrite(req.body, await context(), undefined);
      if (!(await catalog.create(req.identity.tenant, kind, entity))) {
        throw new BadRequestError(`${noun} ${entity.name} already exists`, { field: "name" }, "already_exists");
      }
      return entity;
    },

    [s.update]: async (req: ApiRequest) => {
      const name = parseName(req.params["name"], "name");
      const body = withPathName(req.body, name, noun);
      const ctx = await context();
      const updated = await catalog.modify(req.identity.tenant, kind, name, (current) => {
        if (!current) throw new BadRequestError(`${noun} ${name} does not exist`, undefined, "not_found");
        const merged = kind === "providers" ? mergeProviderUpdate(current.value as Provider, body) : body;
        return { put: parseWrite(merged, ctx, current.value) };
      });
      return updated;
    },

    [s.delete]: async (req: ApiRequest) => {
      const name = parseName(req.params["name"], "name");
      const found = await catalog.get(req.identity.tenant, kind, name);
      if (!found) throw new NotFoundError(noun, name);
      await catalog.remove(req.identity.tenant, kind, name);
      return undefined;
    },
  };
}
