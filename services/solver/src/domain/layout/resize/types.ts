/**
 * Requests and answers of growing, shrinking and replacing nodes of a live cluster (docs/catalog.md, Growing and
 * shrinking). The shapes follow the layout solver's (`LayoutRequest`, `SolvedNode`, `ExistingNode`).
 */
import type {
  CatalogList,
  ClusterTemplate,
  ExistingNode,
  HardwareType,
  ImageType,
  NodeLayoutCount,
  Provider,
  Service,
  SolvedNode,
  SolverStats,
} from "@corral/contracts";

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

/** Input of {@link growCluster}: nodes to add to a live cluster. */
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

/** Output of {@link growCluster}. */
export interface GrowResult {
  /** The new nodes, numbered in the order of their node layouts' preference. */
  nodes: SolvedNode[];
  /** The new nodes' node layouts with how many new nodes use each, in preference order. */
  layout: NodeLayoutCount[];
  stats: SolverStats;
}

/** Input of {@link checkShrink}: nodes to remove from a live cluster. */
export interface ShrinkRequest {
  /** The template copy stored with the cluster. */
  template: ClusterTemplate;
  /**
   * Definitions of (at least) every service on the nodes; their `requires` and `provides` are read. A service
   * without a definition requires nothing and provides only its own name.
   */
  catalog: { services: CatalogList<Service> };
  /** The cluster's nodes. */
  nodes: readonly ExistingNode[];
  /** Ids of the nodes to remove (duplicates count once). */
  remove: readonly string[];
}

/** A reason a removal is refused, named by the rule it would break. */
export interface ShrinkViolation {
  constraint: "size" | "quantities" | "requires";
  message: string;
  /** The service whose bound or dependency breaks (`quantities`, `requires`). */
  service?: string;
  /** For `requires`: the name the service requires that no remaining node would provide. */
  requires?: string;
}

/** Output of {@link checkShrink}. */
export type ShrinkCheck =
  | {
      ok: true;
      /** The nodes that stay, sorted by nodenum. */
      remaining: ExistingNode[];
      /** Services on a removed node and on no remaining node, sorted: they leave the cluster. */
      leavingServices: string[];
    }
  | { ok: false; violations: ShrinkViolation[] };

/** Input of {@link replacementNode}: a new machine for an existing node. */
export interface ReplaceRequest extends NewNodeNaming {
  /** The template copy stored with the cluster (the types must still be compatible with it). */
  template: ClusterTemplate;
  provider: Pick<Provider, "name">;
  catalog: MachineTypeCatalog;
  /** The node to replace: its services, hardware type and image type carry over. */
  node: ExistingNode;
  /** The replacement's nodenum (the cluster's next unused one). */
  nodenum: number;
}
