/** Endpoints the plugins service answers: plugin types, resources and their versions, sync. */
import { Type, type Static } from "@sinclair/typebox";
import { PluginKind, type PluginParameterSet } from "../entities.js";
import { RESOURCE_STATUSES } from "../resource-status.js";
import { subjects } from "../subjects.js";
import { anyCaseValue, bodyOf, integerField, nameField, resourceNameField } from "../validation/fields.js";
import { endpointsOf, route } from "./endpoint.js";
import { anyJson, arrayOf, boolean, bytes, count, objectOf, oneOfValues, recordOf, string, typedSchema } from "./json-schema.js";

/** A plugin specification as the API shows it (`resourcetypes` / `filetype`, not the stored names). */
export interface PluginSpecView {
  name: string;
  description: string;
  resourcetypes: Record<string, { filetype: "file" | "archive" }>;
  parameters: { admin?: PluginParameterSet; user?: PluginParameterSet };
}

/** One version of a resource. */
const resourceMetaSchema = objectOf({ name: string, version: count, status: oneOfValues(RESOURCE_STATUSES) });
export type ResourceMeta = Static<typeof resourceMetaSchema>;

/** What `corral.plugins.copyTenant` answers. */
const copyTenantResultSchema = objectOf({
  resources: count,
  versions: count,
  copied: Type.Integer({ minimum: 0, description: "Versions whose bytes were copied (the rest were already there from an earlier, interrupted copy)." }),
});
export type CopyTenantResult = Static<typeof copyTenantResultSchema>;

/** What a purge of a tenant's data answers: how many records went. */
export const purgeResultSchema = objectOf({ removed: count });
export type PurgeResult = Static<typeof purgeResultSchema>;

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

const tenantRequest = bodyOf({ tenant: nameField() });

/** `?status=`: only versions with this status. */
const statusFilter = {
  query: Type.Object({
    status: Type.Optional(anyCaseValue(RESOURCE_STATUSES, { description: "Only versions with this status (any case); absent: every version." })),
  }),
};

/** `{plugin-type}`: automators or providers. */
const pluginKind = oneOfValues(Object.values(PluginKind));
/** A resource name: the NAME rule, and not `.` or `..` (they would name directories on provisioners). */
const resourceName = resourceNameField();

const typePath = { type: pluginKind };
const resourceTypePath = { ...typePath, plugin: nameField(), resourceType: nameField() };
const resourcePath = { ...resourceTypePath, resource: resourceName };
const versionPath = { ...resourcePath, version: integerField({ minimum: 1, description: "A version number: 1, 2, ..." }) };

const define = endpointsOf("plugins");
const p = subjects.plugins;
const resource = "/plugins/:type/:plugin/:resourceType/:resource";
const version = `${resource}/versions/:version`;

export const pluginEndpoints = {
  "plugins.sync": define.command(p.sync, "POST", "/plugins/sync", "admin"),
  "plugins.listTypes": define.get(p.listTypes, "/plugins/:type", "user", typedSchema<PluginSpecView[]>(arrayOf(pluginSpecViewSchema)), {
    params: Type.Object(typePath),
  }),
  "plugins.getType": define.get(p.getType, "/plugins/:type/:plugin", "user", typedSchema<PluginSpecView>(pluginSpecViewSchema), {
    params: Type.Object({ ...typePath, plugin: nameField() }),
  }),
  "plugins.listResources": define.get(
    p.listResources,
    "/plugins/:type/:plugin/:resourceType",
    "admin",
    recordOf(arrayOf(resourceMetaSchema)),
    { ...statusFilter, params: Type.Object(resourceTypePath) },
  ),
  "plugins.upload": define.rest({
    subject: p.upload,
    routes: [route("POST", resource)],
    access: "admin",
    body: "upload",
    request: { params: Type.Object(resourcePath), body: bytes },
    reply: resourceMetaSchema,
  }),
  "plugins.listVersions": define.get(p.listVersions, resource, "admin", arrayOf(resourceMetaSchema), {
    ...statusFilter,
    params: Type.Object(resourcePath),
  }),
  "plugins.deleteResource": define.command(p.deleteResource, "DELETE", resource, "admin", { params: Type.Object(resourcePath) }),
  "plugins.deleteVersion": define.command(p.deleteVersion, "DELETE", version, "admin", { params: Type.Object(versionPath) }),
  "plugins.stage": define.command(p.stage, "POST", `${version}/stage`, "admin", { params: Type.Object(versionPath) }),
  "plugins.recall": define.command(p.recall, "POST", `${version}/recall`, "admin", { params: Type.Object(versionPath) }),
};

export const pluginsInternalEndpoints = {
  /** Tenant bootstrap: makes `to`'s plugin resources a copy of `from`'s, versions and statuses included. Idempotent. */
  "plugins.copyTenant": define.internal({
    subject: p.copyTenant,
    request: bodyOf({ from: nameField(), to: nameField() }),
    reply: copyTenantResultSchema,
  }),
  /** Tenant deletion: removes every plugin resource of the tenant (metadata and bytes). Idempotent. */
  "plugins.purgeTenant": define.internal({
    subject: p.purgeTenant,
    request: tenantRequest,
    reply: purgeResultSchema,
  }),
};
