/**
 * The planner's entry points: the grouped task DAG (`planGraph`) and the staged plan (`planAction`).
 */
import type { Plan, PlannedTask, PlanRequest } from "@corral/contracts";
import { buildIndexedPlanGraph } from "./graph.js";
import type { PlanGraph } from "./graph.js";

/**
 * The task DAG of an action, as groups of identical tasks on many nodes and the direct edges between them.
 * Useful to inspect or explain a plan, or to drive a DAG executor; `planAction` cuts it into stages.
 * @throws BadRequestError for an unknown action, an undefined service, a target service not on the cluster,
 *   duplicate node ids, or a dependency cycle.
 */
export function planGraph(request: PlanRequest): PlanGraph {
  const { action, groups, edges } = buildIndexedPlanGraph(request);
  return {
    action,
    groups: groups.map(({ taskName, service, nodeIds, level, batch }) => ({
      taskName,
      service,
      nodeIds,
      level,
      ...(batch === undefined ? {} : { batch }),
    })),
    edges,
  };
}

/**
 * Plans a cluster action as stages of tasks (docs/catalog.md, Plans).
 *
 * Tasks: every planned node gets the action's node-level tasks, every planned service on it the action's
 * service tasks it defines (a service without e.g. `start` gets no START task, and ordering passes through it).
 * Order: the per-node chain of the action (e.g. CREATE → CONFIRM → BOOTSTRAP → INSTALL → CONFIGURE →
 * INITIALIZE → START), INSTALL after the INSTALL of install dependencies, INITIALIZE and START after the START
 * of runtime dependencies, STOP before the STOP of runtime dependencies; requires and uses alike, `uses` only
 * when the used service is on the cluster, a name some service `provides` meaning its providers.
 * Stages: ASAP levels of the DAG, each level split so that no node has two tasks in a stage (first fit, in
 * group order). Same input, same plan. Nothing to do yields `stages: []`.
 *
 * @example
 * planAction({ action: "start_services", service: "hbase-master", nodes, services })
 * // => { action: "START_SERVICES", stages: [[{ taskName: "START", nodeId: "n1", service: "zookeeper-server" }, ...], ...] }
 * @throws BadRequestError as {@link planGraph}.
 */
export function planAction(request: PlanRequest): Plan {
  const graph = buildIndexedPlanGraph(request);
  const { nodeIds, groups } = graph;
  const stages: PlannedTask[][] = [];
  const load = new Int32Array(nodeIds.length);
  let start = 0;
  while (start < groups.length) {
    const level = groups[start]?.level;
    let end = start;
    while (end < groups.length && groups[end]?.level === level) end++;
    const subStages: PlannedTask[][] = [];
    const touched: number[] = [];
    for (let g = start; g < end; g++) {
      const group = groups[g];
      if (!group) continue;
      const { taskName, service } = group;
      for (const n of group.nodeIndexes) {
        const slot = load[n] ?? 0;
        if (slot === 0) touched.push(n);
        load[n] = slot + 1;
        let sub = subStages[slot];
        if (!sub) {
          sub = [];
          subStages[slot] = sub;
        }
        sub.push({ taskName, nodeId: nodeIds[n] as string, service });
      }
    }
    for (const n of touched) load[n] = 0;
    for (const sub of subStages) stages.push(sub);
    start = end;
  }
  return { action: graph.action, stages };
}
