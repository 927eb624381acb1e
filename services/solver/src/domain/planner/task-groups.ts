/**
 * The groups of a segment's task DAG: one per (task name, service), holding the nodes it runs on. Node-level
 * tasks on the segment's nodes, each planned service's tasks that it defines, and, when asked, START of the
 * running runtime dependencies that are not planned themselves.
 */
import type { Service } from "@corral/contracts";
import { NODE_TASKS, TaskName, serviceActionOf } from "./actions.js";
import type { PlanSegment } from "./segment.js";

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

/** Whether the service definition has the action a service task runs. */
export function defines(def: Service, task: TaskName): boolean {
  const key = serviceActionOf(task);
  return key !== undefined && def.provisioner?.actions?.[key] !== undefined;
}

export function draftTaskGroups(segment: PlanSegment, definitions: ReadonlyMap<string, Service>): TaskGroupDrafts {
  const { order, serviceNodes, deps } = segment;
  const drafts: TaskGroupDraft[] = [];
  const indexByKey = new Map<string, number>();
  const key = (task: TaskName, service: string): string => `${task}\u0000${service}`;
  const find = (task: TaskName, service: string): number | undefined => indexByKey.get(key(task, service));
  const add = (task: TaskName, service: string, nodes: readonly number[]): void => {
    if (nodes.length === 0 || indexByKey.has(key(task, service))) return;
    indexByKey.set(key(task, service), drafts.length);
    drafts.push({ taskName: task, service, nodeIndexes: nodes });
  };

  for (const task of order) if (NODE_TASKS.has(task)) add(task, "", segment.nodes);
  const plannedSorted = [...serviceNodes.keys()].sort();
  for (const name of plannedSorted) {
    const def = definitions.get(name);
    if (!def) continue;
    const nodes = serviceNodes.get(name) ?? [];
    for (const task of order) if (!NODE_TASKS.has(task) && defines(def, task)) add(task, name, nodes);
  }
  if (segment.startUnplannedDependencies && order.includes(TaskName.Start)) {
    for (const name of plannedSorted) {
      if (find(TaskName.Start, name) === undefined && find(TaskName.Initialize, name) === undefined) continue;
      for (const dep of [...deps.closure("runtime", name)].sort()) {
        const def = definitions.get(dep);
        if (!serviceNodes.has(dep) && def && defines(def, TaskName.Start)) {
          add(TaskName.Start, dep, segment.hosts.get(dep) ?? []);
        }
      }
    }
  }
  return { drafts, find };
}
