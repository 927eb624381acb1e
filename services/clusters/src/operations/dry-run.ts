import type { DryRunNode, DryRunResult, Plan } from "@corral/contracts";
import { nodeTypesOf } from "../domain/node-types.js";
import type { PreparedJob } from "./start-job.js";

/** The answer of a dry run: the cluster's layout after the request and the plan that would get it there. */
export function dryRunResult(clusterId: string, services: string[], nodes: DryRunNode[], plan: Plan): DryRunResult {
  return {
    dryRun: true,
    clusterId,
    layout: { services, nodes },
    plan: {
      action: plan.action,
      stages: plan.stages.map((stage) => stage.map((t) => ({ taskName: t.taskName, nodeId: t.nodeId, service: t.service }))),
    },
  };
}

/** What a prepared job would do: the cluster's nodes with their services after it, and its plan. */
export function jobDryRun({ cluster, request, nodes, plan }: PreparedJob): DryRunResult {
  const leaving = new Set(request.removedNodes?.map((n) => n.id));
  const shown = [...nodes.filter((n) => !leaving.has(n.id)), ...(request.addedNodes ?? [])].map(
    (n): DryRunNode => ({
      id: n.id,
      hostname: typeof n.properties["hostname"] === "string" ? n.properties["hostname"] : "",
      services: request.nodeServices?.[n.id] ?? n.services,
      ...nodeTypesOf(n),
    }),
  );
  const gone = new Set(request.leavingServices);
  return dryRunResult(cluster.id, (request.changes?.services ?? cluster.services).filter((s) => !gone.has(s)), shown, plan);
}
