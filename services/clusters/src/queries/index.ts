import type { ClusterDetails, ClusterStatus, ClusterStatusView, ClusterSummary, Identity, Json, JsonObject, PlanView } from "@corral/contracts";
import type { ReadingDeps } from "../adapters/deps.js";
import { clusterDetailsOf, clusterStatusOf, listClusters } from "./cluster-views.js";
import { nodeProperties, type NodePropertiesQuery } from "./node-properties.js";
import { planOf, plansOf } from "./plan-views.js";
import { findVisibleCluster } from "./visible-cluster.js";

/**
 * What the clusters service's reads answer, as the caller may see it; handlers decode a request and call one of
 * these (changes go through ClusterOperations).
 */
export interface ClusterQueries {
  list(identity: Identity, statuses?: ReadonlySet<ClusterStatus>): Promise<ClusterSummary[]>;
  details(identity: Identity, id: string): Promise<ClusterDetails>;
  status(identity: Identity, id: string): Promise<ClusterStatusView>;
  config(identity: Identity, id: string): Promise<JsonObject>;
  services(identity: Identity, id: string): Promise<string[]>;
  plans(identity: Identity, id: string): Promise<PlanView[]>;
  plan(identity: Identity, id: string, planId: string): Promise<PlanView>;
  nodeProperties(identity: Identity, query: NodePropertiesQuery): Promise<Record<string, Record<string, Json>>>;
}

export function createClusterQueries(deps: ReadingDeps): ClusterQueries {
  return {
    list: (identity, statuses) => listClusters(deps, identity, statuses),
    details: (identity, id) => clusterDetailsOf(deps, identity, id),
    status: (identity, id) => clusterStatusOf(deps, identity, id),
    config: async (identity, id) => (await findVisibleCluster(deps, identity, id)).config,
    services: async (identity, id) => (await findVisibleCluster(deps, identity, id)).services,
    plans: (identity, id) => plansOf(deps, identity, id),
    plan: (identity, id, planId) => planOf(deps, identity, id, planId),
    nodeProperties: (identity, query) => nodeProperties(deps, identity, query),
  };
}

export type { NodePropertiesQuery };
