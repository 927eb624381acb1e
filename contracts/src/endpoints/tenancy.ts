/** Endpoints the tenancy service answers: tenants, provisioners, the catalog, export and import, hostpool hosts. */
import type { CatalogEntity, CatalogEntityByKind, CatalogKind, CatalogSnapshot, JsonObject, Provisioner, Tenant } from "../entities.js";
import type { HostAllocation } from "../host-allocation.js";
import type { ApiRequest } from "../api-request.js";
import { subjects } from "../subjects.js";
import { endpointsOf, route, type RestBinding, type ServedEndpoint } from "./endpoint.js";
import {
  catalogCreateSchema,
  catalogEntitySchemas,
  catalogImportSchema,
  catalogSnapshotSchema,
  catalogUpdateSchema,
  provisionerSchema,
  tenantSchema,
  tenantWriteSchema,
} from "./entity-schemas.js";
import { arrayOf, count, objectOf, oneOfValues, string } from "./json-schema.js";

/** `POST /tenants`, `PUT /tenants/{id}`. */
export interface TenantWriteBody {
  tenant: Tenant;
  /** Copy the superadmin's catalog and plugin resources into a new tenant. @default false */
  bootstrap?: boolean;
}

/** One host of a hostpool provider as the REST API shows it. */
export interface HostView {
  host: string;
  state: "free" | HostAllocation["state"];
  clusterId?: string;
  nodeId?: string;
  since?: number;
  reason?: string;
}

/** `GET /export`: a catalog snapshot whose lists the service may share with its caches (never changed by a caller). */
export type CatalogExport = { readonly [K in CatalogKind]: readonly CatalogEntityByKind[K][] };

const hostViewSchema = objectOf(
  { host: string, state: oneOfValues(["free", "allocated", "quarantined"]) },
  { optional: { clusterId: string, nodeId: string, since: count, reason: string } },
);

const define = endpointsOf("tenancy");
const t = subjects.tenancy;

export const tenantEndpoints = {
  "tenancy.tenants.list": define.get<Tenant[]>(t.tenants.list, "/tenants", "superadmin", arrayOf(tenantSchema)),
  "tenancy.tenants.create": define.rest<TenantWriteBody, Tenant>({
    subject: t.tenants.create,
    routes: [route("POST", "/tenants")],
    access: "superadmin",
    body: "json",
    request: tenantWriteSchema,
    reply: tenantSchema,
  }),
  "tenancy.tenants.get": define.get<Tenant>(t.tenants.get, "/tenants/:id", "superadmin", tenantSchema),
  "tenancy.tenants.update": define.rest<TenantWriteBody, Tenant>({
    subject: t.tenants.update,
    routes: [route("PUT", "/tenants/:id")],
    access: "superadmin",
    body: "json",
    request: tenantWriteSchema,
    reply: tenantSchema,
  }),
  "tenancy.tenants.delete": define.command(t.tenants.delete, "DELETE", "/tenants/:id", "superadmin"),
  "tenancy.provisioners.list": define.get<Provisioner[]>(
    t.provisioners.list,
    "/provisioners",
    "superadmin",
    arrayOf(provisionerSchema),
  ),
  "tenancy.provisioners.get": define.get<Provisioner>(
    t.provisioners.get,
    "/provisioners/:id",
    "superadmin",
    provisionerSchema,
  ),
};

/** The five operations on one catalog kind. Replies are the kind's entity (typed as any catalog entity). */
interface CatalogKindEndpoints {
  list: CatalogEndpoint<undefined, readonly CatalogEntity[]>;
  create: CatalogEndpoint<JsonObject, CatalogEntity>;
  get: CatalogEndpoint<undefined, CatalogEntity>;
  update: CatalogEndpoint<JsonObject, CatalogEntity>;
  delete: CatalogEndpoint<undefined, void>;
}
type CatalogEndpoint<Body, Reply> = ServedEndpoint<"tenancy", ApiRequest<Body>, Reply> & { rest: RestBinding };

export type CatalogEndpoints<K extends CatalogKind> = {
  [Op in keyof CatalogKindEndpoints as `tenancy.catalog.${K}.${Op}`]: CatalogKindEndpoints[Op];
};

/** `GET|POST /{kind}`, `GET|PUT|DELETE /{kind}/{name}` of one catalog kind. */
export function catalogEndpoints<K extends CatalogKind>(kind: K): CatalogEndpoints<K> {
  const s = t.catalog[kind];
  const entity = catalogEntitySchemas[kind];
  const one = `/${kind}/:name`;
  const operations: CatalogKindEndpoints = {
    list: define.get<readonly CatalogEntity[]>(s.list, `/${kind}`, "user", arrayOf(entity)),
    create: define.rest<JsonObject, CatalogEntity>({
      subject: s.create,
      routes: [route("POST", `/${kind}`)],
      access: "admin",
      body: "json",
      request: catalogCreateSchema,
      reply: entity,
    }),
    get: define.get<CatalogEntity>(s.get, one, "user", entity),
    update: define.rest<JsonObject, CatalogEntity>({
      subject: s.update,
      routes: [route("PUT", one)],
      access: "admin",
      body: "json",
      request: catalogUpdateSchema,
      reply: entity,
    }),
    delete: define.command(s.delete, "DELETE", one, "admin"),
  };
  // Only the keys are renamed (`list` -> `tenancy.catalog.<kind>.list`); TypeScript cannot follow that through fromEntries.
  return Object.fromEntries(Object.entries(operations).map(([op, e]) => [`tenancy.catalog.${kind}.${op}`, e])) as CatalogEndpoints<K>;
}

export const hostPoolAndTransferEndpoints = {
  "tenancy.hostpool.hosts": define.get<HostView[]>(
    t.hostpool.hosts,
    "/providers/:name/hosts",
    "admin",
    arrayOf(hostViewSchema),
  ),
  "tenancy.hostpool.release": define.command(
    t.hostpool.release,
    "DELETE",
    "/providers/:name/hosts/:host/quarantine",
    "admin",
  ),
  "tenancy.export": define.get<CatalogExport>(t.export, "/export", "user", catalogSnapshotSchema),
  "tenancy.import": define.rest<Partial<CatalogSnapshot>, void>({
    subject: t.import,
    routes: [route("POST", "/import")],
    access: "admin",
    denialStatus: 403,
    body: "json",
    request: catalogImportSchema,
    reply: "empty",
  }),
};

export const tenancyInternalEndpoints = {
  /** The whole catalog of a tenant, never redacted (the clusters service). */
  "tenancy.snapshot": define.internal<{ tenant: string }, CatalogSnapshot>({
    subject: t.snapshot,
    request: objectOf({ tenant: string }),
    reply: catalogSnapshotSchema,
  }),
};
