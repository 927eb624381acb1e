/**
 * Rolling restarts (docs/catalog.md, Plans): a restart's nodes cut into batches that follow each other, so that at
 * most `maxUnavailable` nodes of any one service are down at a time and never fewer than the service's
 * `quantities.min` run. Each batch is the restart of its nodes alone, in dependency order.
 */
import { BadRequestError, describeValue, type PlanRequest, type Service } from "@corral/contracts";
import { normalizeConstraints } from "../layout/constraints.js";
import { nodeCount } from "../layout/resize/cluster-state.js";
import { PlanAction, TaskName, isNodeChangeAction } from "./actions.js";
import type { PlanSegment } from "./segment.js";
import { defines, draftTaskGroups } from "./task-groups.js";

/** A rolling restart as asked, with the template's bounds it keeps. */
export interface RollingRestart {
  readonly maxUnavailable: number;
  readonly templateName: string;
  /** `quantities.min` of the services that have one. */
  readonly minRunning: ReadonlyMap<string, number>;
}

const ROLLING_ACTIONS: ReadonlySet<PlanAction> = new Set<PlanAction>([
  PlanAction.RestartServices,
  PlanAction.ConfigureWithRestart,
]);

/**
 * The request's `rolling`, checked against the action.
 * @throws BadRequestError for an action that restarts nothing, a node action without `restart`, a
 *   `maxUnavailable` that is no integer of at least 1, or a missing template.
 */
export function readRolling(request: PlanRequest, action: PlanAction): RollingRestart | undefined {
  const rolling = request.rolling as unknown;
  if (rolling === undefined) return undefined;
  if (isNodeChangeAction(action)) {
    if (request.restart !== true) {
      throw new BadRequestError(`${action} takes rolling only with restart: true`, { constraint: "rolling" });
    }
  } else if (!ROLLING_ACTIONS.has(action)) {
    throw new BadRequestError(`${action} does not take rolling: it restarts nothing`, { constraint: "rolling" });
  }
  const maxUnavailable = typeof rolling === "object" && rolling !== null ? (rolling as Record<string, unknown>)["maxUnavailable"] : undefined;
  if (typeof maxUnavailable !== "number" || !Number.isSafeInteger(maxUnavailable) || maxUnavailable < 1) {
    throw new BadRequestError(`rolling.maxUnavailable must be an integer of at least 1, got ${describeValue(maxUnavailable)}`, {
      constraint: "rolling.maxUnavailable",
    });
  }
  const template = request.template;
  if (template === undefined) {
    throw new BadRequestError("rolling needs the cluster's template (each service's quantities.min)", { constraint: "template" });
  }
  const minRunning = new Map<string, number>();
  for (const [service, bounds] of normalizeConstraints(template).services) {
    if (bounds.min > 0) minRunning.set(service, bounds.min);
  }
  return { maxUnavailable, templateName: template.name, minRunning };
}

function appendTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * How many nodes of each service that the segment stops may be down at once: `maxUnavailable`, less when the
 * service's other nodes would not keep its `quantities.min` running (counting every node of the cluster holding
 * it).
 * @throws BadRequestError when a service may not lose a single node, or defines stop without start.
 */
function downLimits(segment: PlanSegment, definitions: ReadonlyMap<string, Service>, rolling: RollingRestart): Map<string, number> {
  const limits = new Map<string, number>();
  if (!segment.order.includes(TaskName.Stop)) return limits;
  for (const [service, nodes] of segment.serviceNodes) {
    const def = definitions.get(service);
    if (!def || !defines(def, TaskName.Stop)) continue;
    if (!defines(def, TaskName.Start)) {
      throw new BadRequestError(`a rolling restart cannot bring ${service} back: it defines stop but not start`, {
        constraint: "rolling",
        service,
      });
    }
    const running = segment.hosts.get(service)?.length ?? nodes.length;
    const min = rolling.minRunning.get(service) ?? 0;
    const limit = Math.min(rolling.maxUnavailable, running - min);
    if (limit < 1) {
      throw new BadRequestError(
        `a rolling restart cannot stop any node of ${service}: it runs on ${nodeCount(running)} and template ${rolling.templateName} ` +
          `keeps at least ${min} running (constraints.services.${service}.quantities.min); restart it without rolling, ` +
          `or restart the other services one by one (POST /clusters/{id}/services/{service}/restart)`,
        { constraint: "quantities", service, min, nodes: running, maxUnavailable: rolling.maxUnavailable },
      );
    }
    limits.set(service, limit);
  }
  return limits;
}

/**
 * The nodes with a task in `segment`, cut into batches: each node, in order, joins the first batch where every
 * service it stops is still under its limit (first fit).
 */
function batchNodes(
  nodes: readonly number[],
  stoppedOn: ReadonlyMap<number, readonly string[]>,
  limits: ReadonlyMap<string, number>,
): number[][] {
  const batches: number[][] = [];
  const down: Map<string, number>[] = [];
  /** Per service, the first batch that may still take one of its nodes (batches only fill up). */
  const firstOpen = new Map<string, number>();
  const fits = (b: number, services: readonly string[]): boolean =>
    services.every((s) => (down[b]?.get(s) ?? 0) < (limits.get(s) ?? 0));
  for (const node of nodes) {
    const services = stoppedOn.get(node) ?? [];
    let b = services.reduce((at, s) => Math.max(at, firstOpen.get(s) ?? 0), 0);
    while (b < batches.length && !fits(b, services)) b++;
    if (b === batches.length) {
      batches.push([]);
      down.push(new Map());
    }
    batches[b]?.push(node);
    const counts = down[b] as Map<string, number>;
    for (const s of services) {
      counts.set(s, (counts.get(s) ?? 0) + 1);
      let open = firstOpen.get(s) ?? 0;
      while (open < batches.length && !fits(open, [s])) open++;
      firstOpen.set(s, open);
    }
  }
  return batches;
}

/**
 * `segment` as consecutive batches (see the module comment). Ordering rules hold within each batch; every task of
 * a batch ends before the next batch starts. When no limit is reached, the one batch holds every node.
 * @throws BadRequestError as {@link downLimits}, and when the segment would START running dependencies that are not
 *   restarted (`options.startUnplannedDependencies`): those are not on the batches' nodes.
 */
export function inRollingBatches(
  segment: PlanSegment,
  definitions: ReadonlyMap<string, Service>,
  rolling: RollingRestart,
): PlanSegment[] {
  const limits = downLimits(segment, definitions, rolling);
  const withTasks = new Set<number>();
  for (const group of draftTaskGroups(segment, definitions).drafts) {
    if (group.service !== "" && !segment.serviceNodes.has(group.service)) {
      throw new BadRequestError(
        `a rolling restart does not start ${group.service} again: it is not restarted (options.startUnplannedDependencies)`,
        { constraint: "rolling", service: group.service },
      );
    }
    for (const n of group.nodeIndexes) withTasks.add(n);
  }
  const servicesOn = new Map<number, string[]>();
  const stoppedOn = new Map<number, string[]>();
  for (const [service, nodes] of segment.serviceNodes) {
    for (const n of nodes) {
      appendTo(servicesOn, n, service);
      if (limits.has(service)) appendTo(stoppedOn, n, service);
    }
  }
  const nodeTasksOn = new Set(segment.nodes);
  const nodes = [...withTasks].sort((a, b) => a - b);
  return batchNodes(nodes, stoppedOn, limits).map((batch, i) => {
    const serviceNodes = new Map<string, number[]>();
    for (const n of batch) for (const service of servicesOn.get(n) ?? []) appendTo(serviceNodes, service, n);
    return {
      ...segment,
      nodes: batch.filter((n) => nodeTasksOn.has(n)),
      serviceNodes,
      startUnplannedDependencies: false,
      batch: i + 1,
    };
  });
}
