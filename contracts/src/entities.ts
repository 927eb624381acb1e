/**
 * The catalog and tenancy entities in their canonical stored form (docs/catalog.md for the catalog model).
 * Validation (`validation/`) turns request bodies into these shapes; everything downstream reads them.
 */
import type { StaticDecode } from "@sinclair/typebox";
import type { clusterTemplateWriteSchema } from "./endpoints/entity-schemas.js";

/** Free-form JSON value as accepted in config trees and provider settings. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A tenant. Extra tenant-specific settings are kept beside the known fields. */
export interface Tenant {
  name: string;
  workers: number;
  description?: string;
  /** Absent means unlimited. */
  maxClusters?: number;
  /** Absent means unlimited. */
  maxNodes?: number;
  [setting: string]: Json | undefined;
}

/** A provisioner, read-only: written by provisioners as they register and heartbeat. */
export interface Provisioner {
  id: string;
  host: string;
  port: number;
  capacityTotal: number;
  capacityFree: number;
  assignments: Record<string, number>;
  usage: Record<string, number>;
}

/** A provider: a provider type and its admin fields. */
export interface Provider {
  name: string;
  description?: string;
  providertype: string;
  /** Provider configuration for provisioners; `{}` when not given. */
  provisioner: JsonObject;
}

/** Hardware types and image types share this shape. */
export interface MachineType {
  name: string;
  description?: string;
  /** provider name -> provider-specific key/values (`flavor` for hardware, `image` for images). */
  providermap: Record<string, Record<string, string>>;
}
export type HardwareType = MachineType;
export type ImageType = MachineType;

export const ServiceActionName = {
  Install: "install",
  Configure: "configure",
  Initialize: "initialize",
  Start: "start",
  Stop: "stop",
  Remove: "remove",
} as const;
export type ServiceActionName = (typeof ServiceActionName)[keyof typeof ServiceActionName];
export const SERVICE_ACTION_NAMES: readonly ServiceActionName[] = Object.values(ServiceActionName);

export interface ServiceAction {
  /** Automator plugin type name. */
  type: string;
  fields: Record<string, string>;
}

export interface DependencyOrdering {
  requires: string[];
  uses: string[];
}

export interface ServiceDependencies {
  provides: string[];
  conflicts: string[];
  install: DependencyOrdering;
  runtime: DependencyOrdering;
}

/**
 * A service (docs/catalog.md, Services and dependencies). `dependencies` is always present in stored form (empty lists
 * when not given).
 */
export interface Service {
  name: string;
  description?: string;
  dependencies: ServiceDependencies;
  provisioner: { actions: Partial<Record<ServiceActionName, ServiceAction>> };
}

/**
 * A cluster template (docs/catalog.md, Cluster templates and constraints): what its declaration,
 * clusterTemplateWriteSchema, decodes to. Absent optional levels are not given; absent compatibility lists are
 * empty; a lease duration is milliseconds, 0 meaning unlimited (initial, max) or any step; `administration.repair`
 * absent: nodes are never replaced automatically, else one missing or unreachable for longer than `afterSeconds` is
 * replaced as by `POST /clusters/{id}/nodes/{nodeId}/replace`, one at a time per cluster.
 */
export type ClusterTemplate = StaticDecode<typeof clusterTemplateWriteSchema>;
export type TemplateCompatibility = ClusterTemplate["compatibility"];
export type TemplateDefaults = ClusterTemplate["defaults"];
export type TemplateConstraints = NonNullable<ClusterTemplate["constraints"]>;
export type ServiceConstraint = NonNullable<TemplateConstraints["services"]>[string];
/** Lease limits and automatic repair; absent: unlimited leases, no automatic repair. */
export type TemplateAdministration = NonNullable<ClusterTemplate["administration"]>;
export type LeaseDuration = TemplateAdministration["leaseduration"];
export type TemplateRepair = NonNullable<TemplateAdministration["repair"]>;

/** The five catalog kinds, as they appear in paths and in the export body. */
export const CatalogKind = {
  Providers: "providers",
  HardwareTypes: "hardwaretypes",
  ImageTypes: "imagetypes",
  Services: "services",
  ClusterTemplates: "clustertemplates",
} as const;
export type CatalogKind = (typeof CatalogKind)[keyof typeof CatalogKind];
export const CATALOG_KINDS: readonly CatalogKind[] = Object.values(CatalogKind);

export interface CatalogEntityByKind {
  providers: Provider;
  hardwaretypes: HardwareType;
  imagetypes: ImageType;
  services: Service;
  clustertemplates: ClusterTemplate;
}
export type CatalogEntity = CatalogEntityByKind[CatalogKind];

/** The export body, each list sorted by name. */
export type CatalogSnapshot = { [K in CatalogKind]: CatalogEntityByKind[K][] };

/** Plugin parameter field. */
export interface PluginField {
  label: string;
  type: string;
  tip?: string;
  override?: boolean;
  sensitive?: boolean;
  default?: Json;
  options?: Json[];
}

export interface PluginParameterSet {
  fields: Record<string, PluginField>;
  /** Alternative sets: satisfied when any one set is fully present. */
  required: string[][];
}

export const PluginKind = { Automator: "automatortypes", Provider: "providertypes" } as const;
export type PluginKind = (typeof PluginKind)[keyof typeof PluginKind];

/** A plugin specification, announced by provisioners. */
export interface PluginSpec {
  name: string;
  description?: string;
  resourceTypes?: Record<string, { format: "file" | "archive"; permissions?: string }>;
  parameters?: { admin?: PluginParameterSet; user?: PluginParameterSet };
  /** What the plugin declares about itself; absent flags are false. */
  capabilities?: PluginCapabilities;
}

/**
 * Declarations a plugin makes instead of the core keeping lists of who is special (docs/providers.md, Writing a
 * plugin).
 */
export interface PluginCapabilities {
  /**
   * A provider's nodes are not machines of their own: automators run their actions on the provisioner host, in the
   * tenant's sandbox, instead of over SSH (`sim`). @default false
   */
  localActions?: boolean;
}
