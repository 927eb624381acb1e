/** Endpoints the tenancy service answers: tenants, provisioners, the catalog, export and import, hostpool hosts. */
import { Type, type Static, type TSchema, type TUnsafe } from "@sinclair/typebox";
import type { CatalogEntity, CatalogEntityByKind, CatalogKind, CatalogSnapshot, Provisioner, Tenant } from "../entities.js";
import type { HostAllocation } from "../host-allocation.js";
import { subjects } from "../subjects.js";
import { bodyOf, nameField, textField } from "../validation/fields.js";
import { endpointsOf, route, type RequestSchemas, type RestEndpoint, type ServedEndpoint } from "./endpoint.js";
import {
  catalogEntitySchemas,
  catalogImportSchema,
  catalogSnapshotSchema,
  catalogUpdateSchema,
  clusterTemplateUpdateSchema,
  clusterTemplateWriteSchema,
  machineTypeWriteSchema,
  providerWriteSchema,
  provisionerSchema,
  serviceWriteSchema,
  tenantSchema,
  tenantWriteSchema,
} from "./entity-schemas.js";
import { arrayOf, count, objectOf, oneOfValues, string, typedSchema } from "./json-schema.js";

/** `POST /tenants`, `PUT /tenants/{id}` as a client sends it. */
export type TenantWriteBody = Static<typeof tenantWriteSchema>;

/** One host of a hostpool provider as the REST API shows it. */
const hostViewSchema = objectOf(
  { host: string, state: oneOfValues(["free", "allocated", "quarantined"] satisfies ReadonlyArray<"free" | HostAllocation["state"]>) },
  { optional: { clusterId: string, nodeId: string, since: count, reason: string } },
);
export type HostView = Static<typeof hostViewSchema>;

/** `GET /export`: a catalog snapshot whose lists the service may share with its caches (never changed by a caller). */
export type CatalogExport = { readonly [K in CatalogKind]: readonly CatalogEntityByKind[K][] };


const define = endpointsOf("tenancy");
const t = subjects.tenancy;

/** A path's tenant name (`/tenants/{id}`). */
const tenantId = { params: Type.Object({ id: nameField() }) };
/** A path's catalog entity or provider name (`/{kind}/{name}`). */
const entityName = { params: Type.Object({ name: nameField() }) };

export const tenantEndpoints = {
  "tenancy.tenants.list": define.get(t.tenants.list, "/tenants", "superadmin", typedSchema<Tenant[]>(arrayOf(tenantSchema))),
  "tenancy.tenants.create": define.rest({
    subject: t.tenants.create,
    routes: [route("POST", "/tenants")],
    access: "superadmin",
    body: "json",
    request: { body: tenantWriteSchema },
    reply: typedSchema<Tenant>(tenantSchema),
  }),
  "tenancy.tenants.get": define.get(t.tenants.get, "/tenants/:id", "superadmin", typedSchema<Tenant>(tenantSchema), tenantId),
  "tenancy.tenants.update": define.rest({
    subject: t.tenants.update,
    routes: [route("PUT", "/tenants/:id")],
    access: "superadmin",
    body: "json",
    request: { ...tenantId, body: tenantWriteSchema },
    reply: typedSchema<Tenant>(tenantSchema),
  }),
  "tenancy.tenants.delete": define.command(t.tenants.delete, "DELETE", "/tenants/:id", "superadmin", {
    ...tenantId,
    errors: { 403: "The superadmin tenant cannot be deleted." },
  }),
  "tenancy.provisioners.list": define.get(
    t.provisioners.list,
    "/provisioners",
    "superadmin",
    typedSchema<Provisioner[]>(arrayOf(provisionerSchema)),
  ),
  "tenancy.provisioners.get": define.get(t.provisioners.get, "/provisioners/:id", "superadmin", typedSchema<Provisioner>(provisionerSchema), {
    params: Type.Object({ id: textField() }),
  }),
};

/** An update body as its handler gets it: the entity, its name optional (the path names it). */
type CatalogUpdateBody = { name?: string } & Record<string, unknown>;

/** The five operations on one catalog kind. Replies are the kind's entity (typed as any catalog entity). */
interface CatalogKindEndpoints {
  list: CatalogEndpoint<{}, "none", readonly CatalogEntity[]>;
  create: CatalogEndpoint<{ body: TSchema }, "json", CatalogEntity>;
  get: CatalogEndpoint<typeof entityName, "none", CatalogEntity>;
  update: CatalogEndpoint<typeof entityName & { body: TUnsafe<CatalogUpdateBody> }, "json", CatalogEntity>;
  delete: CatalogEndpoint<typeof entityName, "none", void>;
}
type CatalogEndpoint<R extends RequestSchemas, K extends "json" | "none", Reply> = ServedEndpoint<"tenancy", R, Reply> & RestEndpoint<R, K, Reply>;

export type CatalogEndpoints<K extends CatalogKind> = {
  [Op in keyof CatalogKindEndpoints as `tenancy.catalog.${K}.${Op}`]: CatalogKindEndpoints[Op];
};

/**
 * What a create of each kind takes, declared whole: that a provider or automator type is one a provisioner
 * announced, and an action's fields its admin parameters, the tenancy service checks (it knows the plugin types), as
 * it checks what reaches across a template's sections (contracts/src/validation/cluster-template.ts).
 */
const createSchemas: Readonly<Record<CatalogKind, TSchema>> = {
  providers: providerWriteSchema,
  hardwaretypes: machineTypeWriteSchema,
  imagetypes: machineTypeWriteSchema,
  services: serviceWriteSchema,
  clustertemplates: clusterTemplateWriteSchema,
};

/**
 * What an update of each kind takes (the name, optional, comes from the path). A template is declared whole; the
 * other kinds are objects the tenancy service checks whole (a provider's absent fields keep their stored values).
 */
const anyUpdate = typedSchema<CatalogUpdateBody>(catalogUpdateSchema);
const updateSchemas: Readonly<Record<CatalogKind, TUnsafe<CatalogUpdateBody>>> = {
  providers: anyUpdate,
  hardwaretypes: anyUpdate,
  imagetypes: anyUpdate,
  services: anyUpdate,
  clustertemplates: typedSchema<CatalogUpdateBody>(clusterTemplateUpdateSchema),
};

/**
 * `GET|POST /{kind}`, `GET|PUT|DELETE /{kind}/{name}` of one catalog kind, their bodies as createSchemas and
 * updateSchemas declare them.
 */
export function catalogEndpoints<K extends CatalogKind>(kind: K): CatalogEndpoints<K> {
  const s = t.catalog[kind];
  const entity = typedSchema<CatalogEntity>(catalogEntitySchemas[kind]);
  const one = `/${kind}/:name`;
  const operations: CatalogKindEndpoints = {
    list: define.get(s.list, `/${kind}`, "user", typedSchema<readonly CatalogEntity[]>(arrayOf(catalogEntitySchemas[kind]))),
    create: define.rest({
      subject: s.create,
      routes: [route("POST", `/${kind}`)],
      access: "admin",
      body: "json",
      request: { body: createSchemas[kind] },
      reply: entity,
    }),
    get: define.get(s.get, one, "user", entity, entityName),
    update: define.rest({
      subject: s.update,
      routes: [route("PUT", one)],
      access: "admin",
      body: "json",
      request: { ...entityName, body: updateSchemas[kind] },
      reply: entity,
    }),
    delete: define.command(s.delete, "DELETE", one, "admin", entityName),
  };
  // Only the keys are renamed (`list` -> `tenancy.catalog.<kind>.list`); TypeScript cannot follow that through fromEntries.
  return Object.fromEntries(Object.entries(operations).map(([op, e]) => [`tenancy.catalog.${kind}.${op}`, e])) as CatalogEndpoints<K>;
}

export const hostPoolAndTransferEndpoints = {
  "tenancy.hostpool.hosts": define.get(t.hostpool.hosts, "/providers/:name/hosts", "admin", arrayOf(hostViewSchema), entityName),
  "tenancy.hostpool.release": define.command(t.hostpool.release, "DELETE", "/providers/:name/hosts/:host/quarantine", "admin", {
    params: Type.Object({ name: nameField(), host: string }),
  }),
  "tenancy.export": define.get(t.export, "/export", "user", typedSchema<CatalogExport>(catalogSnapshotSchema)),
  "tenancy.import": define.rest({
    subject: t.import,
    routes: [route("POST", "/import")],
    access: "admin",
    denialStatus: 403,
    body: "json",
    request: { body: catalogImportSchema },
    reply: "empty",
  }),
};

export const tenancyInternalEndpoints = {
  /** The whole catalog of a tenant, never redacted (the clusters service). */
  "tenancy.snapshot": define.internal({
    subject: t.snapshot,
    request: bodyOf({ tenant: nameField() }),
    reply: typedSchema<CatalogSnapshot>(catalogSnapshotSchema),
  }),
};
