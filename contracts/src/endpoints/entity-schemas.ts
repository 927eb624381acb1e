/**
 * JSON Schemas of the stored entities (entities.ts) as the services answer them: the canonical forms the
 * validation produces. Request bodies are looser (numeric strings, `null` for absent, durations such as "10s"); the
 * write schemas at the end declare them.
 */
import { Type, type TSchema } from "@sinclair/typebox";
import { CATALOG_KINDS, SERVICE_ACTION_NAMES, type CatalogKind, type JsonObject, type ServiceActionName } from "../entities.js";
import { bodyOf, booleanField, integerField, jsonCopy, jsonObjectField, mapOf, nameField, nameKeyedMap, stringValue } from "../validation/fields.js";
import { describe as describeValue, isObject } from "../validation/primitives.js";
import { withProblem } from "../validation/problems.js";
import { durationField, templateDnsSuffixField, textOnly } from "../validation/template-fields.js";
import {
  anyJson,
  anyObject,
  arrayOf,
  boolean,
  count,
  integer,
  objectOf,
  recordOf,
  string,
  typedSchema,
} from "./json-schema.js";

const names = arrayOf(string);
const withDescription = { description: string };

/** A tenant: the known fields, and any extra tenant setting beside them. */
export const tenantSchema = objectOf(
  { name: string, workers: count },
  { optional: { ...withDescription, maxClusters: count, maxNodes: count }, additionalProperties: anyJson },
);

/** A provisioner as the API shows it. */
export const provisionerSchema = objectOf({
  id: string,
  host: string,
  port: integer,
  capacityTotal: count,
  capacityFree: count,
  assignments: recordOf(count),
  usage: recordOf(count),
});

/**
 * A provider; `provisioner` holds the provider type's fields (sensitive ones redacted for all but the tenant admin).
 */
export const providerSchema = objectOf({ name: string, providertype: string, provisioner: anyObject }, { optional: withDescription });

/** Hardware types and image types (one shape). */
export const machineTypeSchema = objectOf({ name: string, providermap: recordOf(recordOf(string)) }, { optional: withDescription });

const orderingSchema = objectOf({ requires: names, uses: names });
const serviceActionSchema = objectOf({ type: string, fields: recordOf(string) });

/** A service (docs/catalog.md, Services and dependencies). */
export const serviceSchema = objectOf(
  {
    name: string,
    dependencies: objectOf({ provides: names, conflicts: names, install: orderingSchema, runtime: orderingSchema }),
    provisioner: objectOf({ actions: recordOf(serviceActionSchema) }),
  },
  { optional: withDescription },
);

const bounds = objectOf({}, { optional: { min: count, max: count } });

/** A cluster template (docs/catalog.md, Cluster templates and constraints). */
export const clusterTemplateSchema = objectOf(
  {
    name: string,
    compatibility: objectOf({ hardwaretypes: names, imagetypes: names, services: names }),
    defaults: objectOf(
      { services: names, provider: string, config: anyObject },
      { optional: { hardwaretype: string, imagetype: string, dnsSuffix: string } },
    ),
  },
  {
    optional: {
      ...withDescription,
      constraints: objectOf(
        {},
        {
          optional: {
            size: bounds,
            layout: objectOf({}, { optional: { mustcoexist: arrayOf(names), cantcoexist: arrayOf(names) } }),
            services: recordOf(objectOf({}, { optional: { hardwaretypes: names, imagetypes: names, quantities: bounds } })),
          },
        },
      ),
      administration: objectOf(
        { leaseduration: objectOf({ initial: count, max: count, step: count }) },
        { optional: { repair: objectOf({ auto: boolean, afterSeconds: Type.Integer({ minimum: 1 }) }) } },
      ),
    },
  },
);

/** Each catalog kind's entity as answered. */
export const catalogEntitySchemas: Readonly<Record<CatalogKind, TSchema>> = {
  providers: providerSchema,
  hardwaretypes: machineTypeSchema,
  imagetypes: machineTypeSchema,
  services: serviceSchema,
  clustertemplates: clusterTemplateSchema,
};

/** The export and import body: every kind's list. */
export const catalogSnapshotSchema = objectOf(
  Object.fromEntries(CATALOG_KINDS.map((kind) => [kind, arrayOf(catalogEntitySchemas[kind])])),
);

/**
 * An entity of an import as the row takes it: an object naming the entity; the tenancy service checks the rest per
 * kind (contracts/src/validation/catalog-snapshot.ts), naming the entity in its refusals
 * (`clustertemplates[0] (name "t"): defaults is required`).
 */
export const catalogCreateSchema = typedSchema<JsonObject>(objectOf({ name: nameField() }, { additionalProperties: true }));

/** A catalog update: the name comes from the path (a different one in the body is a 400). */
export const catalogUpdateSchema = objectOf({}, { optional: { name: nameField() }, additionalProperties: true });

/**
 * `POST /import`: the lists of an export, any of them absent (or `null`); other keys are ignored. Each entity is
 * an object naming it, checked per kind by the tenancy service (typed as objects until then).
 */
const entityList = arrayOf(catalogCreateSchema);
export const catalogImportSchema = typedSchema<Partial<Record<CatalogKind, readonly object[]>>>(
  bodyOf(
    {},
    { providers: entityList, hardwaretypes: entityList, imagetypes: entityList, services: entityList, clustertemplates: entityList } satisfies Record<
      CatalogKind,
      TSchema
    >,
  ),
);

/**
 * A hardware type or image type as a write gives it: `name`, optional `description`, and `providermap`, provider
 * name -> settings (`flavor` for hardware, `image` for images), whose numbers and booleans are stored as text.
 */
export const machineTypeWriteSchema = bodyOf(
  { name: nameField(), providermap: nameKeyedMap(mapOf(stringValue())) },
  { description: string },
  { order: ["name", "description", "providermap"] },
);

/**
 * A provider as a write gives it: `name`, optional `description`, `providertype` (a provider plugin type some
 * provisioner announced: checked by the tenancy service, which knows them) and `provisioner`, the provider type's
 * settings (any JSON object; absent: none).
 */
export const providerWriteSchema = bodyOf(
  { name: nameField(), providertype: Type.String({ minLength: 1 }) },
  { description: string, provisioner: jsonObjectField({ copy: true }) },
  { order: ["name", "description", "providertype", "provisioner"] },
);

const nameList = () => arrayOf(nameField());
const noDependencies = { requires: [], uses: [] };
/** `install` or `runtime` ordering of a service write: absent lists are empty. */
const orderingWrite = () => bodyOf({}, { requires: nameList(), uses: nameList() }, { defaults: noDependencies });
/** A service action as a write gives it: an automator type and its fields (numbers and booleans as text). */
const serviceActionWrite = () => bodyOf({ type: Type.String({ minLength: 1 }) }, { fields: mapOf(stringValue()) }, { defaults: { fields: {} } });

/**
 * A service as a write gives it: `name`, optional `description`, `dependencies` (absent lists empty) and
 * `provisioner.actions`, action name (install, configure, initialize, start, stop, remove) -> automator type and
 * fields. That the type is one a provisioner announced and the fields satisfy its admin parameters is checked by
 * the tenancy service, which knows the plugin types (contracts/src/validation/service.ts).
 */
export const serviceWriteSchema = bodyOf(
  {
    name: nameField(),
    provisioner: bodyOf({
      actions: bodyOf({}, Object.fromEntries(SERVICE_ACTION_NAMES.map((action) => [action, serviceActionWrite()])) as Record<ServiceActionName, ReturnType<typeof serviceActionWrite>>, {
        unknownKey: `is not an allowed action (allowed: ${SERVICE_ACTION_NAMES.join(", ")})`,
      }),
    }),
  },
  {
    description: string,
    dependencies: bodyOf(
      {},
      { provides: nameList(), conflicts: nameList(), install: orderingWrite(), runtime: orderingWrite() },
      { defaults: { provides: [], conflicts: [], install: noDependencies, runtime: noDependencies } },
    ),
  },
  {
    order: ["name", "description", "dependencies", "provisioner"],
    defaults: { dependencies: { provides: [], conflicts: [], install: noDependencies, runtime: noDependencies } },
  },
);

const range = (minimum: number) => bodyOf({}, { min: integerField({ minimum }), max: integerField() });
/** A list of name sets (`mustcoexist`, `cantcoexist`), kept as given; how many distinct names a set needs is the parser's. */
const nameGroups = () =>
  withProblem(arrayOf(nameList()), (value) => (Array.isArray(value) || value === null ? undefined : `must be an array of arrays of names (got ${describeValue(value)})`));
const serviceConstraintWrite = bodyOf({}, { hardwaretypes: nameList(), imagetypes: nameList(), quantities: range(0) });
const noLease = { initial: 0, max: 0, step: 0 };
const leaseDurationWrite = withProblem(
  bodyOf({}, { initial: durationField(), max: durationField(), step: durationField() }, { defaults: noLease }),
  (value) => (value === undefined || value === null ? "is required when administration is given" : undefined),
);

const templateSections = {
  compatibility: bodyOf({}, { hardwaretypes: nameList(), imagetypes: nameList(), services: nameList() }, { defaults: { hardwaretypes: [], imagetypes: [], services: [] } }),
  defaults: bodyOf(
    { services: nameList(), provider: nameField(), config: jsonObjectField({ copy: true }) },
    { hardwaretype: textOnly(nameField()), imagetype: textOnly(nameField()), dnsSuffix: templateDnsSuffixField() },
  ),
};
const templateOptions = {
  description: string,
  constraints: bodyOf({}, {
    size: range(1),
    layout: bodyOf({}, { mustcoexist: nameGroups(), cantcoexist: nameGroups() }),
    services: nameKeyedMap(serviceConstraintWrite),
  }),
  administration: bodyOf(
    { leaseduration: leaseDurationWrite },
    {
      repair: bodyOf({
        auto: booleanField({ description: "Replace a node missing or unreachable for longer than afterSeconds." }),
        afterSeconds: integerField({ minimum: 1, description: "Seconds a node may stay missing or unreachable before it is replaced." }),
      }),
    },
  ),
};
const templateOrder = { order: ["name", "description", "compatibility", "defaults", "constraints", "administration"] };
/**
 * A cluster template as a write gives it (docs/catalog.md, Cluster templates and constraints): integers also as
 * numeric strings, lease durations also as `"10s"`, `"15m"`, `"2h"`, `"1d"`, absent compatibility lists empty,
 * `null` for an absent optional level. What reaches across its sections (defaults within compatibility, every `max`
 * at least its `min`, the lease rule, distinct names in layout sets) is checked by checkClusterTemplate
 * (contracts/src/validation/cluster-template.ts).
 */
export const clusterTemplateWriteSchema = bodyOf({ name: nameField(), ...templateSections }, templateOptions, templateOrder);

/** `PUT /clustertemplates/{name}`: a template whose name, when given, is the path's (the handler checks that). */
export const clusterTemplateUpdateSchema = bodyOf(templateSections, { name: nameField(), ...templateOptions }, templateOrder);

/**
 * A tenant as a write gives it: `name`, `workers`, optional `description` and quotas (absent or `null`: unlimited);
 * every other key is an extra tenant setting, kept as given (any JSON value).
 */
export const tenantFields = () =>
  bodyOf(
    { name: nameField(), workers: integerField({ description: "Task workers the provisioners run for the tenant." }) },
    { description: string, maxClusters: integerField(), maxNodes: integerField() },
    { others: jsonCopy },
  );

/** `POST /tenants` and `PUT /tenants/{id}`: the tenant and, on create, whether to copy the superadmin's catalog. */
export const tenantWriteSchema = bodyOf(
  { tenant: withProblem(tenantFields(), (value) => (isObject(value) ? undefined : "must be an object")) },
  { bootstrap: booleanField({ description: "Copy the superadmin's catalog and plugin resources into a new tenant. @default false" }) },
);
