/** Endpoints the plugins service answers: plugin types, resources and their versions, sync. */
import type { PluginParameterSet } from "../entities.js";
import { RESOURCE_STATUSES, type ResourceStatus } from "../resource-status.js";
import { subjects } from "../subjects.js";
import { endpointsOf, route } from "./endpoint.js";
import { anyJson, arrayOf, boolean, bytes, count, objectOf, oneOfValues, recordOf, string } from "./json-schema.js";

/** A plugin specification as the API shows it (`resourcetypes` / `filetype`, not the stored names). */
export interface PluginSpecView {
  name: string;
  description: string;
  resourcetypes: Record<string, { filetype: "file" | "archive" }>;
  parameters: { admin?: PluginParameterSet; user?: PluginParameterSet };
}

/** One version of a resource. */
export interface ResourceMeta {
  name: string;
  version: number;
  status: ResourceStatus;
}

/** What `corral.plugins.copyTenant` answers. */
export interface CopyTenantResult {
  resources: number;
  versions: number;
  /** Versions whose bytes were copied (the rest were already there from an earlier, interrupted copy). */
  copied: number;
}

/** What a purge of a tenant's data answers: how many records went. */
export interface PurgeResult {
  removed: number;
}

const fieldSchema = objectOf(
  { label: string, type: string },
  { optional: { tip: string, override: boolean, sensitive: boolean, default: anyJson, options: arrayOf(anyJson) } },
);
const parameterSetSchema = objectOf({ fields: recordOf(fieldSchema), required: arrayOf(arrayOf(string)) });

const pluginSpecViewSchema = objectOf({
  name: string,
  description: string,
  resourcetypes: recordOf(objectOf({ filetype: oneOfValues(["file", "archive"]) })),
  parameters: objectOf({}, { optional: { admin: parameterSetSchema, user: parameterSetSchema } }),
});

const resourceMetaSchema = objectOf({ name: string, version: count, status: oneOfValues(RESOURCE_STATUSES) });
const purgeResultSchema = objectOf({ removed: count });
const tenantRequest = objectOf({ tenant: string });

/** `?status=`: only versions with this status. */
const statusFilter = {
  status: { description: "Only versions with this status (any case); absent: every version.", schema: oneOfValues(RESOURCE_STATUSES) },
};

const define = endpointsOf("plugins");
const p = subjects.plugins;
const resource = "/plugins/:type/:plugin/:resourceType/:resource";
const version = `${resource}/versions/:version`;

export const pluginEndpoints = {
  "plugins.sync": define.command(p.sync, "POST", "/plugins/sync", "admin"),
  "plugins.listTypes": define.get<PluginSpecView[]>(
    p.listTypes,
    "/plugins/:type",
    "user",
    arrayOf(pluginSpecViewSchema),
  ),
  "plugins.getType": define.get<PluginSpecView>(p.getType, "/plugins/:type/:plugin", "user", pluginSpecViewSchema),
  "plugins.listResources": define.get<Record<string, ResourceMeta[]>, "status">(
    p.listResources,
    "/plugins/:type/:plugin/:resourceType",
    "admin",
    recordOf(arrayOf(resourceMetaSchema)),
    statusFilter,
  ),
  "plugins.upload": define.rest<undefined, ResourceMeta>({
    subject: p.upload,
    routes: [route("POST", resource)],
    access: "admin",
    body: "upload",
    request: bytes,
    reply: resourceMetaSchema,
  }),
  "plugins.listVersions": define.get<ResourceMeta[], "status">(
    p.listVersions,
    resource,
    "admin",
    arrayOf(resourceMetaSchema),
    statusFilter,
  ),
  "plugins.deleteResource": define.command(p.deleteResource, "DELETE", resource, "admin"),
  "plugins.deleteVersion": define.command(p.deleteVersion, "DELETE", version, "admin"),
  "plugins.stage": define.command(p.stage, "POST", `${version}/stage`, "admin"),
  "plugins.recall": define.command(p.recall, "POST", `${version}/recall`, "admin"),
};

export const pluginsInternalEndpoints = {
  /** Tenant bootstrap: makes `to`'s plugin resources a copy of `from`'s, versions and statuses included. Idempotent. */
  "plugins.copyTenant": define.internal<{ from: string; to: string }, CopyTenantResult>({
    subject: p.copyTenant,
    request: objectOf({ from: string, to: string }),
    reply: objectOf({ resources: count, versions: count, copied: count }),
  }),
  /** Tenant deletion: removes every plugin resource of the tenant (metadata and bytes). Idempotent. */
  "plugins.purgeTenant": define.internal<{ tenant: string }, PurgeResult>({
    subject: p.purgeTenant,
    request: tenantRequest,
    reply: purgeResultSchema,
  }),
};
