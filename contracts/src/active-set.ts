/**
 * A tenant's live plugin resources: the plugins service's sync publishes one set per tenant (key `kvKey(tenant)`
 * in `buckets.pluginActive`), provisioners install exactly that set. Like Coopr's resources payload:
 * kind -> plugin -> resource type -> what must be installed.
 */
export interface ActiveSet {
  tenant: string;
  /** Grows by one with every publication. */
  generation: number;
  /** ms */
  publishedAt: number;
  automatortypes: Record<string, Record<string, ActiveResourceType>>;
  providertypes: Record<string, Record<string, ActiveResourceType>>;
}

export type ResourceFormat = "file" | "archive";

/** The live resources of one resource type, with how to install them. */
export interface ActiveResourceType {
  format: ResourceFormat;
  /** Octal file mode from the plugin specification (file resources only). */
  permissions?: string;
  active: ActiveResource[];
}

/** One live resource version as provisioners fetch it. */
export interface ActiveResource {
  name: string;
  version: number;
  /** Object name in the plugin resources object store. */
  object: string;
  size: number;
  format: ResourceFormat;
}
