/**
 * Builds the plan's task DAG in compact form: one *group* per (task name, service) holding the nodes it runs
 * on, and edges between groups. A `node`-scoped edge orders the two groups' tasks on the same node (the
 * per-node chain CREATE → CONFIRM → BOOTSTRAP → INSTALL → …); a `cluster`-scoped edge orders every task of one
 * group before every task of the other (the cross-service rules). This is the task DAG of reference 3.3 without
 * materialising one edge per pair of nodes (reference 6.10): its size depends on the services, not on n.
 */
import type { Service } from "../../../../../shared/src/entities.js";
import { BadRequestError } from "../../../../../shared/src/errors.js";
import { describe as describeValue } from "../../../../../shared/src/validation/primitives.js";
import {
  ACTION_TASK_ORDER,
  NODE_TASKS,
  ORDERING_RULES,
  PlanAction,
  SERVICE_ACTION_KEY,
  SINGLE_SERVICE_ACTIONS,
  TaskName,
  parsePlanAction,
} from "./actions.js";
import { resolveClusterDependencies } from "./dependencies.js";

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
   * services' INITIALIZE and START (Coopr's behaviour for `add_services` and for `restart_services` of one
   * service, reference 3.3). When false, only planned services get tasks.
   * @default true, except for `restart_services`: restart stops and starts the service and its runtime dependents
   * only (Coopr also re-started every dependency, none of which was stopped)
   */
  readonly startUnplannedDependencies?: boolean;
}

/** What to plan. */
export interface PlanRequest {
  /** The cluster action, upper case (`CLUSTER_CREATE`) or the spec's lower case (`cluster_create`). */
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
}

/** One (task name, service) group of the task DAG. */
export interface TaskGroup {
  readonly taskName: TaskName;
  /** Empty string for node-level tasks. */
  readonly service: string;
  /** Nodes the group's tasks run on, in input order. */
  readonly nodeIds: readonly string[];
  /** 0-based ASAP level: 1 + the longest path from a source group (all tasks of a group share it). */
  readonly level: number;
}

/** An edge between two groups (indexes into `PlanGraph.groups`). */
export interface GroupEdge {
  readonly from: number;
  readonly to: number;
  /** `node`: same-node tasks only (per-node chain); `cluster`: every task of `from` before every task of `to`. */
  readonly scope: "node" | "cluster";
}

/** The task DAG of one plan, by groups, reduced to direct dependencies. */
export interface PlanGraph {
  readonly action: PlanAction;
  /** Sorted by level, then task order of the action, then service name. */
  readonly groups: readonly TaskGroup[];
  readonly edges: readonly GroupEdge[];
}

/** Internal group with node indexes, shared with the stage cutter. */
export interface IndexedGroup extends TaskGroup {
  readonly nodeIndexes: readonly number[];
}

/** Internal result shared with the stage cutter. */
export interface IndexedPlanGraph {
  readonly action: PlanAction;
  readonly nodeIds: readonly string[];
  readonly groups: readonly IndexedGroup[];
  readonly edges: readonly GroupEdge[];
}

function defines(def: Service, task: TaskName): boolean {
  const key = SERVICE_ACTION_KEY[task];
  return key !== undefined && def.provisioner?.actions?.[key] !== undefined;
}

/** Builds the grouped task DAG; see {@link PlanGraph}. Shared by `planGraph` and `planAction`. */
export function buildIndexedPlanGraph(request: PlanRequest): IndexedPlanGraph {
  const action = typeof request.action === "string" ? parsePlanAction(request.action) : undefined;
  if (action === undefined) throw new BadRequestError(`unknown action ${describeValue(request.action)}`);
  // Restart touches the service and its dependents only: its dependencies were never stopped.
  const startUnplanned = request.options?.startUnplannedDependencies ?? action !== PlanAction.RestartServices;

  if (!Array.isArray(request.nodes)) throw new BadRequestError("nodes must be an array");
  if (!Array.isArray(request.services)) throw new BadRequestError("services must be an array");
  const definitions = new Map<string, Service>();
  for (const def of request.services) {
    if (typeof def?.name !== "string") throw new BadRequestError("every service definition needs a name");
    definitions.set(def.name, def);
  }

  // Nodes and the service -> node indexes map.
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
  const deps = resolveClusterDependencies(clusterServices, definitions);

  // Which services and nodes are planned (reference 3.4).
  if (request.service !== undefined && !SINGLE_SERVICE_ACTIONS.has(action)) {
    throw new BadRequestError(`${action} does not take a single service`);
  }
  if (request.addedServices !== undefined && action !== PlanAction.AddServices) {
    throw new BadRequestError(`${action} does not take added services`);
  }
  let planned: Set<string>;
  let plannedNodes: number[];
  if (action === PlanAction.AddServices) {
    planned = new Set(request.addedServices ?? []);
    const nodeSet = new Set<number>();
    for (const name of planned) {
      const hosts = serviceNodes.get(name);
      if (!hosts) throw new BadRequestError(`service ${name} is not on the cluster`);
      for (const n of hosts) nodeSet.add(n);
    }
    plannedNodes = [...nodeSet].sort((a, b) => a - b);
  } else {
    plannedNodes = nodeIds.map((_id, i) => i);
    if (request.service === undefined) {
      planned = new Set(clusterServices);
    } else {
      const target = request.service;
      if (!serviceNodes.has(target)) throw new BadRequestError(`service ${target} is not on the cluster`);
      const closure =
        action === PlanAction.StartServices ? deps.closure("runtime", target) : deps.dependents("runtime", target);
      planned = new Set([target, ...closure]);
    }
  }

  // Groups.
  const order = ACTION_TASK_ORDER[action];
  const orderIndex = new Map(order.map((t, i) => [t, i] as const));
  interface Draft {
    taskName: TaskName;
    service: string;
    nodeIndexes: readonly number[];
  }
  const drafts: Draft[] = [];
  const groupIndex = new Map<string, number>();
  const key = (task: TaskName, service: string): string => `${task}\u0000${service}`;
  const addGroup = (task: TaskName, service: string, nodes: readonly number[]): void => {
    if (nodes.length === 0 || groupIndex.has(key(task, service))) return;
    groupIndex.set(key(task, service), drafts.length);
    drafts.push({ taskName: task, service, nodeIndexes: nodes });
  };
  const find = (task: TaskName, service: string): number | undefined => groupIndex.get(key(task, service));

  for (const task of order) if (NODE_TASKS.has(task)) addGroup(task, "", plannedNodes);
  const plannedSorted = [...planned].sort();
  for (const name of plannedSorted) {
    const def = definitions.get(name);
    const hosts = serviceNodes.get(name) ?? [];
    if (!def) continue;
    for (const task of order) if (!NODE_TASKS.has(task) && defines(def, task)) addGroup(task, name, hosts);
  }
  if (startUnplanned && orderIndex.has(TaskName.Start)) {
    for (const name of plannedSorted) {
      if (find(TaskName.Start, name) === undefined && find(TaskName.Initialize, name) === undefined) continue;
      for (const dep of [...deps.closure("runtime", name)].sort()) {
        const def = definitions.get(dep);
        if (!planned.has(dep) && def && defines(def, TaskName.Start)) {
          addGroup(TaskName.Start, dep, serviceNodes.get(dep) ?? []);
        }
      }
    }
  }

  // Edges.
  const edges: GroupEdge[] = [];
  const edgeKeys = new Set<string>();
  const addEdge = (from: number, to: number, scope: "node" | "cluster"): void => {
    const k = `${from},${to}`;
    if (edgeKeys.has(k)) return;
    edgeKeys.add(k);
    edges.push({ from, to, scope });
  };
  // Per-node chains: node-level tasks, then each planned service's defined tasks, in the action's order.
  // (Every action's order lists node-level tasks before service tasks, so chain groups share their level.)
  let previousNodeTask: number | undefined;
  for (const task of order) {
    const g = NODE_TASKS.has(task) ? find(task, "") : undefined;
    if (g === undefined) continue;
    if (previousNodeTask !== undefined) addEdge(previousNodeTask, g, "node");
    previousNodeTask = g;
  }
  for (const name of plannedSorted) {
    let previous: number | undefined;
    for (const task of order) {
      const g = find(task, NODE_TASKS.has(task) ? "" : name);
      if (g === undefined) continue;
      if (previous !== undefined) addEdge(previous, g, "node");
      previous = g;
    }
  }
  // Cross-service rules, reduced to the nearest dependencies that have the rule's `from` task in the plan:
  // actions pass through services lacking them, and a dependency reachable through another is implied.
  for (const rule of ORDERING_RULES) {
    drafts.forEach((draft, to) => {
      if (draft.taskName !== rule.to || draft.service === "") return;
      const candidates: string[] = [];
      for (const dep of deps.closure(rule.kind, draft.service)) {
        if (find(rule.from, dep) !== undefined) candidates.push(dep);
      }
      candidates.sort();
      for (const dep of candidates) {
        const implied = candidates.some((other) => other !== dep && deps.closure(rule.kind, other).has(dep));
        if (implied) continue;
        const from = find(rule.from, dep) as number;
        if (rule.reversed) addEdge(to, from, "cluster");
        else addEdge(from, to, "cluster");
      }
    });
  }

  // Levels (longest path from a source), Kahn's algorithm over groups.
  const levels = new Array<number>(drafts.length).fill(0);
  const indegree = new Array<number>(drafts.length).fill(0);
  const outgoing: number[][] = drafts.map(() => []);
  for (const e of edges) {
    indegree[e.to] = (indegree[e.to] ?? 0) + 1;
    outgoing[e.from]?.push(e.to);
  }
  const queue: number[] = [];
  indegree.forEach((d, i) => {
    if (d === 0) queue.push(i);
  });
  let processed = 0;
  while (processed < queue.length) {
    const g = queue[processed++] as number;
    for (const next of outgoing[g] ?? []) {
      levels[next] = Math.max(levels[next] ?? 0, (levels[g] ?? 0) + 1);
      indegree[next] = (indegree[next] ?? 0) - 1;
      if (indegree[next] === 0) queue.push(next);
    }
  }
  if (processed !== drafts.length) {
    // Unreachable with acyclic dependencies (checked above); kept as a guard.
    throw new BadRequestError("task dependencies form a cycle", undefined, "dependency_cycle");
  }

  // Deterministic order: level, task order of the action, service name.
  const sortedIdx = drafts
    .map((_d, i) => i)
    .sort((a, b) => {
      const da = drafts[a] as Draft;
      const db = drafts[b] as Draft;
      return (
        (levels[a] ?? 0) - (levels[b] ?? 0) ||
        (orderIndex.get(da.taskName) ?? 0) - (orderIndex.get(db.taskName) ?? 0) ||
        (da.service < db.service ? -1 : da.service > db.service ? 1 : 0)
      );
    });
  const remap = new Array<number>(drafts.length);
  sortedIdx.forEach((oldIdx, newIdx) => {
    remap[oldIdx] = newIdx;
  });
  const groups: IndexedGroup[] = sortedIdx.map((i) => {
    const d = drafts[i] as Draft;
    return {
      taskName: d.taskName,
      service: d.service,
      nodeIndexes: d.nodeIndexes,
      nodeIds: d.nodeIndexes.map((n) => nodeIds[n] as string),
      level: levels[i] ?? 0,
    };
  });
  const sortedEdges = edges
    .map((e) => ({ from: remap[e.from] as number, to: remap[e.to] as number, scope: e.scope }))
    .sort((a, b) => a.from - b.from || a.to - b.to);
  return { action, nodeIds, groups, edges: sortedEdges };
}
