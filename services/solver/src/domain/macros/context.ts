/**
 * Per-cluster macro context: nodes indexed once (service -> nodes sorted by nodenum, node by id), plus a cache
 * of node-independent macro values, so that expanding for every node of a large cluster costs little per node.
 */
import { BadRequestError, type MacroClusterInput, type MacroNode } from "@corral/contracts";
import type { MacroExpression } from "./parser.js";

/** A prepared cluster (opaque); build it once per cluster version with `createMacroContext`. */
export interface MacroContext {
  readonly nodeCount: number;
  /** Nodes holding `service`, sorted by nodenum then id. */
  nodesWithService(service: string): readonly MacroNode[];
}

type Cached = { readonly value: string | null } | { readonly error: BadRequestError };

/** Internal implementation of {@link MacroContext}. */
export class ClusterMacroContext implements MacroContext {
  readonly owner: string | undefined;
  readonly nodeById = new Map<string, MacroNode>();
  private readonly byService = new Map<string, MacroNode[]>();
  private readonly ranks = new Map<string, Map<string, number>>();
  private readonly cache = new Map<string, Cached>();

  constructor(input: MacroClusterInput) {
    this.owner = input.owner;
    for (const node of input.nodes) {
      if (this.nodeById.has(node.id)) throw new BadRequestError(`node ${node.id} appears twice`);
      this.nodeById.set(node.id, node);
      for (const service of new Set(node.services)) {
        const list = this.byService.get(service);
        if (list) list.push(node);
        else this.byService.set(service, [node]);
      }
    }
    for (const list of this.byService.values()) {
      list.sort((a, b) => a.nodenum - b.nodenum || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    }
  }

  get nodeCount(): number {
    return this.nodeById.size;
  }

  nodesWithService(service: string): readonly MacroNode[] {
    return this.byService.get(service) ?? [];
  }

  /** 1-based rank of the node among the nodes with `service`, or undefined. */
  rankOf(service: string, nodeId: string): number | undefined {
    let ranks = this.ranks.get(service);
    if (!ranks) {
      ranks = new Map();
      this.nodesWithService(service).forEach((n, i) => ranks?.set(n.id, i + 1));
      this.ranks.set(service, ranks);
    }
    return ranks.get(nodeId);
  }

  /** Value of a node-independent macro, computed once per context. */
  cached(expr: MacroExpression, compute: () => string | null): string | null {
    let entry = this.cache.get(expr.source);
    if (!entry) {
      try {
        entry = { value: compute() };
      } catch (err) {
        if (!(err instanceof BadRequestError)) throw err;
        entry = { error: err };
      }
      this.cache.set(expr.source, entry);
    }
    if ("error" in entry) throw entry.error;
    return entry.value;
  }
}
