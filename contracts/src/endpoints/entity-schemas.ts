/**
 * JSON Schemas of the stored entities (entities.ts) as the services answer them: the canonical forms the
 * validation (validation/) produces. Request bodies are looser (validation/ accepts numeric strings, `null` for
 * absent, durations such as "10s"); the write schemas at the end describe them.
 */
import { CATALOG_KINDS, type CatalogKind } from "../entities.js";
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
  type JsonSchema,
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
      administration: objectOf({ leaseduration: objectOf({ initial: count, max: count, step: count }) }),
    },
  },
);

/** Each catalog kind's entity as answered. */
export const catalogEntitySchemas: Readonly<Record<CatalogKind, JsonSchema>> = {
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

/** A catalog create as the validation takes it: an object naming the entity; the rest is checked per kind. */
export const catalogCreateSchema = objectOf({ name: string }, { additionalProperties: true });

/** A catalog update: the name comes from the path (a different one in the body is a 400). */
export const catalogUpdateSchema = objectOf({}, { optional: { name: string }, additionalProperties: true });

/** `POST /import`: the lists of an export, any of them absent. */
export const catalogImportSchema = objectOf(
  {},
  { optional: Object.fromEntries(CATALOG_KINDS.map((kind) => [kind, arrayOf(catalogCreateSchema)])) },
);

/** `POST /tenants` and `PUT /tenants/{id}`. */
export const tenantWriteSchema = objectOf(
  { tenant: objectOf({ name: string, workers: count }, { additionalProperties: true }) },
  { optional: { bootstrap: boolean } },
);
