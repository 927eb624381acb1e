/**
 * Public types of the layout solver and the add-services solver (see `index.ts` for the functions).
 */
import type {
  ClusterTemplate,
  HardwareType,
  ImageType,
  Provider,
  Service,
} from "@corral/contracts";

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

/**
 * Search limits. The step budget is deterministic (the same request always gets the same answer);
 * the time limit is a safety net and needs a clock, since the domain never reads the system time.
 */
export interface SolverOptions {
  /**
   * Maximum search steps (service-set enumeration nodes + count-search nodes + LP pivots, or for
   * add-services: placement-search nodes). Exceeding it throws a `solver_budget_exhausted` error.
   * @default 2_000_000
   */
  maxSteps?: number;
  /** Wall-clock limit in milliseconds, checked against `clock`; requires `clock`. @default none */
  timeLimitMs?: number;
  /** Millisecond clock used with `timeLimitMs` (e.g. `() => performance.now()`). */
  clock?: () => number;
  /**
   * Require every requested service on at least one node (Coopr may leave a service with no `min`
   * quantity on zero nodes; reference section 6.4). Layout solver only.
   * @default false
   */
  requireEveryService?: boolean;
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
 * Node properties as Coopr wrote them for a new node (reference coopr-provisioner.md, node properties).
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
   * quantity-bounded services; see README). Add-services: distinct node layouts of the existing nodes.
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

/** A constraint a layout breaks (see `checkLayout`). */
export interface LayoutViolation {
  constraint:
    | "mustcoexist"
    | "cantcoexist"
    | "hardwaretypes"
    | "imagetypes"
    | "quantities"
    | "size";
  message: string;
  /** Ids of the offending nodes, when the violation is about nodes. */
  nodeIds?: string[];
}
