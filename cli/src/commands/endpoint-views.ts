/** Tables for the endpoints whose answers read better than the generic table. */
import type { ClusterDetails, ClusterSummary, EndpointName, PlanView } from "@corral/contracts";
import { clusterDetailsView, clusterTable, planView } from "../output/cluster-views.js";

const VIEWS: Partial<Record<EndpointName, (value: never) => string>> = {
  "clusters.list": (v: ClusterSummary[]) => clusterTable(v),
  "clusters.get": (v: ClusterDetails) => clusterDetailsView(v),
  "clusters.plan": (v: PlanView) => planView(v),
  "clusters.plans": (v: PlanView[]) => v.map(planView).join("\n\n"),
};

export function tableViewOf(name: EndpointName): ((value: unknown) => string) | undefined {
  return VIEWS[name] as ((value: unknown) => string) | undefined;
}
