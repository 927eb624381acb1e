/**
 * The request and reply types of the solver's endpoints (endpoints/solver.ts): the solver library takes and
 * returns these, in-process for the clusters service and over NATS for everyone else.
 */
import type { PlanAction } from "../cluster-actions.js";
import type { ClusterTemplate, HardwareType, ImageType, Json, Provider, Service } from "../entities.js";
import type { TaskName } from "../task-names.js";

// Layout solver and add-services solver.

/** A catalog collection: either a map keyed by entity name or a plain list of entities. */
export type CatalogList<T extends { name: string }> = ReadonlyMap<string, T> | readonly T[];

/** The tenant catalog entities the solvers read. Extra entities are ignored. */
export interface LayoutCatalog {
  /** Services by name; must hold at least every service placed on the cluster. */
  services: CatalogList<Service>;
  /** All hardware types of the tenant (a required type is looked up here; otherwise all are candidates). */
  hardwareTypes: CatalogList<HardwareType>;
  /** All image types of the tenant. */
  imageTypes: CatalogList<ImageType>;
}

/** Input of {@link solveLayout}: a cluster create request with its catalog entities resolved. */
export interface LayoutRequest {
  template: ClusterTemplate;
  /** The provider the cluster is created with (request override or template default). Only `name` is read. */
  provider: Pick<Provider, "name">;
  catalog: LayoutCatalog;
  /** Number of machines; a positive integer within the template's size bounds. */
  numMachines: number;
  /** Cluster id; used for node ids and hostnames (a numeric id is written without leading zeros). */
  clusterId: string;
  /** Cluster name; used for hostnames. */
  clusterName: string;
  /** Request override of the template's default services (an empty list means "use the default"). */
  services?: readonly string[];
  /** Request override of the template's default hardware type (empty string means none). */
  hardwaretype?: string;
  /** Request override of the template's default image type (empty string means none). */
  imagetype?: string;
  /** Request override of the template's dnsSuffix; `local` when neither is given. */
  dnsSuffix?: string;
}

/**
 * Node properties as Coopr wrote them for a new node, so provider plugins written for it find what they read.
 * Provisioners add `ipaddresses` and may replace `hostname` later.
 */
export interface NodeProperties {
  /** `<name without leading digits><clusterId>-<nodenum>.<dnsSuffix or local>`, first label at most 63 chars. */
  hostname: string;
  /** Same as the node's `nodenum` (a number, as in Coopr's JSON). */
  nodenum: number;
  hardwaretype: string;
  imagetype: string;
  /** The hardware type's `flavor` for the provider. */
  flavor: string;
  /** The image type's `image` for the provider. */
  image: string;
  /** The image type's `sshuser` for the provider, `root` when absent. */
  sshuser: string;
}

/** A node of a solved layout. */
export interface SolvedNode {
  /** Deterministic id: `<clusterId>-<nodenum>` (see `nodeIdFor`). */
  id: string;
  clusterId: string;
  /** 1000, 1001, ... in layout preference order. */
  nodenum: number;
  /** Service names on the node, sorted. */
  services: string[];
  hardwaretype: string;
  imagetype: string;
  properties: NodeProperties;
}

/** One node layout of a solution with how many nodes use it. */
export interface NodeLayoutCount {
  /** Sorted service names. */
  services: string[];
  hardwaretype: string;
  imagetype: string;
  count: number;
}

/** Output of {@link solveLayout}. */
export interface LayoutSolution {
  /** The cluster's services: the request's list (or the template default), duplicates removed. */
  services: string[];
  /** The effective dns suffix used in hostnames (`local` when none was given). */
  dnsSuffix: string;
  /** Nodes sorted by nodenum. */
  nodes: SolvedNode[];
  /** Node layouts with a non-zero count, in preference order (the order nodes are numbered in). */
  layout: NodeLayoutCount[];
  stats: SolverStats;
}

export interface SolverStats {
  /** Search steps used (compare with `SolverOptions.maxSteps`). */
  steps: number;
  /**
   * Layout solver: node layouts the count search chose from (the first, in preference order, of each set of
   * quantity-bounded services; see domain/layout/node-layouts.ts in the solver). Add-services: distinct node
   * layouts of the existing nodes.
   */
  candidateLayouts: number;
}

/** An existing node as the add-services solver reads it. `SolvedNode` fits. */
export interface ExistingNode {
  id: string;
  nodenum: number;
  services: readonly string[];
  hardwaretype: string;
  imagetype: string;
}

/** Input of {@link addServices}. */
export interface AddServicesRequest {
  /** The template copy stored with the cluster. */
  template: ClusterTemplate;
  /** Catalog services by name: must hold the cluster's services and the services to add. */
  catalog: { services: CatalogList<Service> };
  /** The cluster's nodes (none move, none are added). */
  nodes: readonly ExistingNode[];
  /** The cluster's service list; defaults to the union of the nodes' services. */
  clusterServices?: readonly string[];
  /** Services to add; none may already be on the cluster. */
  services: readonly string[];
}

/** A node that receives services. */
export interface ChangedNode {
  id: string;
  nodenum: number;
  /** Services added to this node, sorted. */
  addedServices: string[];
  /** The node's services after the change, sorted. */
  services: string[];
}

/** Output of {@link addServices}. */
export interface AddServicesResult {
  /** The cluster's services after the change: the previous list, then the added services in request order. */
  services: string[];
  /** Nodes that receive at least one service, sorted by nodenum. */
  changedNodes: ChangedNode[];
  /** For each added service (request order), the ids of the nodes it goes to, sorted by nodenum. */
  placements: { service: string; nodeIds: string[] }[];
  stats: SolverStats;
}

// Growing a live cluster (docs/catalog.md, Growing and shrinking).

/** The tenant's hardware and image types: new nodes' types are chosen among them, with the provider's entries. */
export interface MachineTypeCatalog {
  hardwareTypes: CatalogList<HardwareType>;
  imageTypes: CatalogList<ImageType>;
}

/** How new nodes are named: as the layout solver names a new cluster's nodes. */
export interface NewNodeNaming {
  /** Cluster id; used for node ids and hostnames. */
  clusterId: string;
  /** Cluster name; used for hostnames. */
  clusterName: string;
  /** The cluster's dnsSuffix; `local` when absent or empty. */
  dnsSuffix?: string;
}

/** Input of `growCluster`: nodes to add to a live cluster. */
export interface GrowRequest extends NewNodeNaming {
  /** The template copy stored with the cluster. */
  template: ClusterTemplate;
  /** The cluster's provider; only `name` is read (usable types need an entry for it). */
  provider: Pick<Provider, "name">;
  catalog: MachineTypeCatalog;
  /** The cluster's nodes. None of them changes. */
  nodes: readonly ExistingNode[];
  /** The cluster's service list; defaults to the union of the nodes' services (which it always includes). */
  clusterServices?: readonly string[];
  /** How many nodes to add: a positive integer. */
  numMachines: number;
  /**
   * The services every new node gets, each already on the cluster's service list. Absent or empty: the solver
   * chooses each new node's services.
   */
  services?: readonly string[];
  /** The hardware type of every new node (else the template's `defaults.hardwaretype`, else chosen per node). */
  hardwaretype?: string;
  /** The image type of every new node (else the template's `defaults.imagetype`, else chosen per node). */
  imagetype?: string;
  /**
   * The first new node's nodenum; the others follow. Pass the cluster's next unused nodenum so that a removed
   * node's id is never given again. @default one above the highest nodenum of `nodes` (FIRST_NODENUM without nodes)
   */
  firstNodenum?: number;
}

/** Output of `growCluster`. */
export interface GrowResult {
  /** The new nodes, numbered in the order of their node layouts' preference. */
  nodes: SolvedNode[];
  /** The new nodes' node layouts with how many new nodes use each, in preference order. */
  layout: NodeLayoutCount[];
  stats: SolverStats;
}

// Planner.

/** A node as the planner sees it. */
export interface PlanNode {
  readonly id: string;
  /** Names of the services on the node (after the change, for `add_services`). */
  readonly services: readonly string[];
}

/** Planner options. */
export interface PlanOptions {
  /**
   * Re-run START of running runtime dependencies that are not themselves part of the plan, before the planned
   * services' INITIALIZE and START (Coopr's plans for `add_services` and for `restart_services` of one service).
   * When false, only planned services get tasks (docs/catalog.md, Plans).
   * @default true, except for `restart_services`: restart stops and starts the service and its runtime dependents
   * only, and its dependencies were never stopped; and except for the node actions, where it applies to the new
   * nodes' services (their dependencies elsewhere keep running)
   */
  readonly startUnplannedDependencies?: boolean;
}

/** What to plan. */
export interface PlanRequest {
  /** The cluster action, upper case (`CLUSTER_CREATE`) or the API's lower case (`cluster_create`). */
  readonly action: PlanAction | Lowercase<PlanAction>;
  /** Every node of the cluster, with its services. Order is kept within stages. */
  readonly nodes: readonly PlanNode[];
  /** Definitions of (at least) every service on the nodes; extra definitions are ignored. */
  readonly services: readonly Service[];
  /** For `start_services` / `stop_services` / `restart_services` of one service; absent = all services. */
  readonly service?: string;
  /** For `add_services`: the services being added (already placed on `nodes`). */
  readonly addedServices?: readonly string[];
  readonly options?: PlanOptions;
  /**
   * For `add_nodes` and `replace_node`: ids of the nodes the plan builds and brings up, listed in `nodes` with
   * their services. `nodes` holds the cluster's nodes before the change plus these.
   */
  readonly addedNodes?: readonly string[];
  /**
   * For `remove_nodes` and `replace_node`: ids of the nodes (listed in `nodes`) that leave the cluster. A removed
   * node's services are stopped and removed, then its machine deleted; a replaced node's machine is deleted.
   */
  readonly removedNodes?: readonly string[];
  /** Removed nodes the provider can no longer reach: they get no task (the caller forgets them). */
  readonly unreachableNodes?: readonly string[];
  /**
   * For `add_nodes`, `remove_nodes` and `replace_node`: ids of the remaining nodes whose expanded config changes
   * (for example by comparing macro expansion before and after); each gets CONFIGURE of its services.
   */
  readonly changedNodes?: readonly string[];
  /** For `add_nodes`, `remove_nodes` and `replace_node`: also restart the services of `changedNodes`. @default false */
  readonly restart?: boolean;
  /**
   * For `restart_services`, `cluster_configure_with_restart` and the node actions with `restart`: stop and start
   * the nodes in batches, at most `maxUnavailable` (an integer, at least 1) nodes of any one service down at a time
   * and never fewer than the service's `quantities.min` running. Needs `template`.
   */
  readonly rolling?: { readonly maxUnavailable: number };
  /** The template stored with the cluster; read with `rolling` (each service's `quantities.min`). */
  readonly template?: ClusterTemplate;
}

/** One task of a plan; the caller assigns ids (see `numberTasks`). */
export interface PlannedTask {
  readonly taskName: TaskName;
  readonly nodeId: string;
  /** Service name; empty string for node-level tasks (CREATE, CONFIRM, BOOTSTRAP, DELETE). */
  readonly service: string;
}

/** A staged plan: every task of a stage completes before the next stage starts; no node twice in a stage. */
export interface Plan {
  readonly action: PlanAction;
  readonly stages: PlannedTask[][];
}

// Macro expander.

/** Node properties the expander reads; other properties are ignored. */
export interface MacroNodeProperties {
  /** Used by `host.*` macros. */
  readonly hostname?: string;
  /** ip type (`bind_v4`, `access_v4`, …) -> address. Used by `ip.*` macros. */
  readonly ipaddresses?: Readonly<Record<string, string>>;
  /** The node's single address property; used for the default type `bind_v4` when `ipaddresses` lacks it. */
  readonly ipaddress?: string;
  readonly [property: string]: unknown;
}

/** A cluster node as the expander sees it. */
export interface MacroNode {
  readonly id: string;
  /** Orders nodes within a service (indexed forms, `instance.self.service`, lists). */
  readonly nodenum: number;
  readonly services: readonly string[];
  readonly properties: MacroNodeProperties;
}

/** The cluster to expand macros for. */
export interface MacroClusterInput {
  readonly nodes: readonly MacroNode[];
  /** Value of `%cluster.owner%`; when absent that macro stays unexpanded. */
  readonly owner?: string;
}

/** Expand a config for some (or all) nodes of a cluster. */
export interface ExpandRequest extends MacroClusterInput {
  config: Json;
  /** Nodes to expand for; all nodes when absent. */
  nodeIds?: string[];
}
