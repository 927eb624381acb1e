/**
 * The groups of the task DAG: one per (task name, service), holding the planned nodes it runs on. Node-level
 * tasks on every planned node, each planned service's tasks that it defines, and, when asked, START of the
 * running runtime dependencies that are not planned themselves.
 */
import type { Service } from "@corral/contracts";
import { ACTION_TASK_ORDER, NODE_TASKS, TaskName, serviceActionOf } from "./actions.js";
import type { ClusterDependencies } from "./dependencies.js";
import type { PlanCluster } from "./plan-request.js";
import type { PlannedScope } from "./planned-scope.js";

/** A group before it has a level and its final place. */
export interface TaskGroupDraft {
  readonly taskName: TaskName;
  /** Empty string for node-level tasks. */
  readonly service: string;
  readonly nodeIndexes: readonly number[];
}

/** The groups in the order they were made, and a lookup by task and service. */
export interface TaskGroupDrafts {
  readonly drafts: readonly TaskGroupDraft[];
  /** Index into `drafts` of the group of `task` for `service` ("" for node-level tasks), if any. */
  find(task: TaskName, service: string): number | undefined;
}

function defines(def: Service, task: TaskName): boolean {
  const key = serviceActionOf(task);
  return key !== undefined && def.provisioner?.actions?.[key] !== undefined;
}

export function draftTaskGroups(cluster: PlanCluster, scope: PlannedScope, deps: ClusterDependencies): TaskGroupDrafts {
  const { definitions, serviceNodes } = cluster;
  const order = ACTION_TASK_ORDER[cluster.action];
  const drafts: TaskGroupDraft[] = [];
  const indexByKey = new Map<string, number>();
  const key = (task: TaskName, service: string): string => `${task}\u0000${service}`;
  const find = (task: TaskName, service: string): number | undefined => indexByKey.get(key(task, service));
  const add = (task: TaskName, service: string, nodes: readonly number[]): void => {
    if (nodes.length === 0 || indexByKey.has(key(task, service))) return;
    indexByKey.set(key(task, service), drafts.length);
    drafts.push({ taskName: task, service, nodeIndexes: nodes });
  };

  for (const task of order) if (NODE_TASKS.has(task)) add(task, "", scope.nodes);
  const plannedSorted = [...scope.services].sort();
  for (const name of plannedSorted) {
    const def = definitions.get(name);
    const hosts = serviceNodes.get(name) ?? [];
    if (!def) continue;
    for (const task of order) if (!NODE_TASKS.has(task) && defines(def, task)) add(task, name, hosts);
  }
  if (cluster.startUnplannedDependencies && order.includes(TaskName.Start)) {
    for (const name of plannedSorted) {
      if (find(TaskName.Start, name) === undefined && find(TaskName.Initialize, name) === undefined) continue;
      for (const dep of [...deps.closure("runtime", name)].sort()) {
        const def = definitions.get(dep);
        if (!scope.services.has(dep) && def && defines(def, TaskName.Start)) {
          add(TaskName.Start, dep, serviceNodes.get(dep) ?? []);
        }
      }
    }
  }
  return { drafts, find };
}
