/**
 * What the planner is asked, and the request read into the cluster it describes: the action, the service
 * definitions, the nodes and which nodes hold each service.
 */
import { type PlanRequest, type Service, BadRequestError, describeValue } from "@corral/contracts";
import { PlanAction, isNodeChangeAction, parsePlanAction } from "./actions.js";

/** The cluster a plan request describes. */
export interface PlanCluster {
  readonly action: PlanAction;
  /** {@link PlanOptions.startUnplannedDependencies} with its default applied. */
  readonly startUnplannedDependencies: boolean;
  readonly definitions: ReadonlyMap<string, Service>;
  /** Node ids in request order; nodes are referred to by their index here. */
  readonly nodeIds: readonly string[];
  /** Service name -> indexes of the nodes holding it, ascending. */
  readonly serviceNodes: ReadonlyMap<string, readonly number[]>;
  /** Services on at least one node, sorted. */
  readonly clusterServices: readonly string[];
}

/** @throws BadRequestError for an unknown action, malformed nodes or services, a duplicate node, an undefined service. */
export function readPlanRequest(request: PlanRequest): PlanCluster {
  const action = typeof request.action === "string" ? parsePlanAction(request.action) : undefined;
  if (action === undefined) throw new BadRequestError(`unknown action ${describeValue(request.action)}`);
  // Restart touches the service and its dependents only, and the node actions the nodes they change: the
  // dependencies were never stopped.
  const startUnplannedDependencies =
    request.options?.startUnplannedDependencies ?? (action !== PlanAction.RestartServices && !isNodeChangeAction(action));

  if (!Array.isArray(request.nodes)) throw new BadRequestError("nodes must be an array");
  if (!Array.isArray(request.services)) throw new BadRequestError("services must be an array");
  const definitions = new Map<string, Service>();
  for (const def of request.services) {
    if (typeof def?.name !== "string") throw new BadRequestError("every service definition needs a name");
    definitions.set(def.name, def);
  }

  const nodeIds: string[] = [];
  const seenIds = new Set<string>();
  const serviceNodes = new Map<string, number[]>();
  request.nodes.forEach((node, index) => {
    if (typeof node?.id !== "string" || !Array.isArray(node.services as unknown)) {
      throw new BadRequestError("every node needs an id and a services array");
    }
    if (seenIds.has(node.id)) throw new BadRequestError(`node ${node.id} appears twice`);
    seenIds.add(node.id);
    nodeIds.push(node.id);
    for (const name of new Set<string>(node.services)) {
      if (!definitions.has(name)) throw new BadRequestError(`service ${name} does not exist`);
      const list = serviceNodes.get(name);
      if (list) list.push(index);
      else serviceNodes.set(name, [index]);
    }
  });
  const clusterServices = [...serviceNodes.keys()].sort();
  return { action, startUnplannedDependencies, definitions, nodeIds, serviceNodes, clusterServices };
}
