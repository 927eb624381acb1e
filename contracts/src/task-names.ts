import type { ServiceActionName } from "./entities.js";

/** A task's name (`taskName` of a plan's tasks). */
export const TaskName = {
  Create: "CREATE",
  Confirm: "CONFIRM",
  Bootstrap: "BOOTSTRAP",
  Install: "INSTALL",
  Remove: "REMOVE",
  Initialize: "INITIALIZE",
  Configure: "CONFIGURE",
  Start: "START",
  Stop: "STOP",
  Delete: "DELETE",
} as const;
export type TaskName = (typeof TaskName)[keyof typeof TaskName];

/**
 * Who carries out a task. Node-level ("hardware") tasks run once per node for no service: the provider plugin's
 * or, for BOOTSTRAP, the provisioner's own. Service-level tasks run the service action of the same name through
 * the service's automator.
 */
export type TaskKind =
  | { readonly level: "node"; readonly runBy: "provider" | "provisioner" }
  | { readonly level: "service"; readonly serviceAction: ServiceActionName };

/** The one table every set of task names below is derived from. */
export const TASK_KINDS: Readonly<Record<TaskName, TaskKind>> = {
  CREATE: { level: "node", runBy: "provider" },
  CONFIRM: { level: "node", runBy: "provider" },
  BOOTSTRAP: { level: "node", runBy: "provisioner" },
  INSTALL: { level: "service", serviceAction: "install" },
  REMOVE: { level: "service", serviceAction: "remove" },
  INITIALIZE: { level: "service", serviceAction: "initialize" },
  CONFIGURE: { level: "service", serviceAction: "configure" },
  START: { level: "service", serviceAction: "start" },
  STOP: { level: "service", serviceAction: "stop" },
  DELETE: { level: "node", runBy: "provider" },
};

const TASK_NAMES: readonly TaskName[] = Object.values(TaskName);
const tasksWhere = (test: (kind: TaskKind) => boolean): ReadonlySet<TaskName> =>
  new Set(TASK_NAMES.filter((name) => test(TASK_KINDS[name])));

/** Node-level tasks: one per node, `service` is the empty string; they get the cluster config unexpanded. */
export const NODE_TASKS = tasksWhere((kind) => kind.level === "node");
/** Tasks a provider plugin carries out. */
export const PROVIDER_TASKS = tasksWhere((kind) => kind.level === "node" && kind.runBy === "provider");

export function isTaskName(name: string): name is TaskName {
  return Object.hasOwn(TASK_KINDS, name);
}

/** The service definition key (`provisioner.actions.<key>`) a service-level task runs; undefined for node tasks. */
export function serviceActionOf(task: TaskName): ServiceActionName | undefined {
  const kind = TASK_KINDS[task];
  return kind.level === "service" ? kind.serviceAction : undefined;
}
