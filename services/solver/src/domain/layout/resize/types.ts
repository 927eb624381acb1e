/**
 * Requests and answers of growing, shrinking and replacing nodes of a live cluster (docs/catalog.md, Growing and
 * shrinking). The shapes follow the layout solver's (`LayoutRequest`, `SolvedNode`, `ExistingNode`).
 */
import type { CatalogList, ClusterTemplate, ExistingNode, MachineTypeCatalog, NewNodeNaming, Provider, Service } from "@corral/contracts";

/** Growing is a solver endpoint (`solver.grow`): its request and answer are declared with the endpoint's. */
export type { GrowRequest, GrowResult, MachineTypeCatalog, NewNodeNaming } from "@corral/contracts";

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
