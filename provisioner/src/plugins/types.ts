import type { HealthTarget, NodeHealthCheck, PluginSpec, TaskName, TaskMessage, TaskOutcome } from "@corral/contracts";
import type { Logger } from "@corral/shared";

/**
 * The plugin interface of the reference provisioner. A plugin is an object carrying its `PluginSpec` (announced to
 * the server at registration) and the operations of its kind. One instance serves every task of every tenant, so
 * operations must not keep per-task state on the instance; everything a task needs is in `ctx.task`.
 */

/** What a plugin operation gets for one task. */
export interface PluginContext {
  /** The whole task message; `task.config` holds node, provider, service action and earlier results. */
  task: TaskMessage;
  /** Tenant whose task subject the task came from (same as `task.tenant`). */
  tenant: string;
  /** The provisioner's work directory (root of every tenant's files). */
  workDir: string;
  provisionerId: string;
  workerId: string;
  /**
   * Aborted when the provisioner stops hard (its bounded shutdown wait ran out). The outcome of an aborted
   * operation is discarded and the task is handed back for redelivery, so a plugin should stop promptly.
   */
  signal: AbortSignal;
  log: Logger;
  /**
   * The spec of the task's provider type as this provisioner carries it (`config.provider.providertype`), or
   * undefined when it carries none of that name. Automators read its declarations (`runsActionsLocally`).
   */
  providerSpec?: PluginSpec;
}

/** What a plugin reports for one task; becomes the `TaskResult` (see shared/src/tasks.ts). */
export type PluginOutcome = TaskOutcome;

/** A provider plugin: carries out CREATE, CONFIRM and DELETE for `config.provider.providertype === spec.name`. */
export interface ProviderPlugin {
  kind: "providertypes";
  spec: PluginSpec;
  /** Requests a machine; should return `result.providerid` and `result["ssh-auth"]`. */
  create(ctx: PluginContext): Promise<PluginOutcome>;
  /** Waits until the machine is usable; returns `hostname`, `ipaddresses` and optionally `result.ssh_host_keys`. */
  confirm(ctx: PluginContext): Promise<PluginOutcome>;
  /** Removes the machine; succeeds when it is already gone. */
  delete(ctx: PluginContext): Promise<PluginOutcome>;
  /**
   * Whether nodes' machines still exist and answer (docs/providers.md, Node health). Optional: a provider without it
   * leaves its nodes' health `unknown`.
   */
  health?: ProviderHealth;
  /** Stops what the plugin runs in the background (reconcilers); called once when the provisioner stops. */
  close?(): Promise<void>;
}

/** What a provider's health check gets besides the nodes. */
export interface HealthCheckContext {
  /** The provisioner's work directory (root of every tenant's files). */
  workDir: string;
  provisionerId: string;
  /** Aborted when the provisioner stops or the check runs past its bound: answer (or throw) promptly. */
  signal: AbortSignal;
  log: Logger;
}

/**
 * A provider's node health checks. The provisioner checking a tenant hands each batch of its nodes to `check`
 * every `provisioner.health.intervalMs` (and on demand), never two checks of one batch at once.
 */
export interface ProviderHealth {
  /**
   * The batch a node is checked in: one `check` call covers a batch, so nodes one API call can answer for together
   * share one (a Docker host, an LXD endpoint and project, an EC2 region and account). Undefined: the node is not
   * checked (its provider's settings say so). Called for every node of every round: cheap, and never throws.
   */
  batchOf(node: HealthTarget): string | undefined;
  /**
   * What each node's check found, one answer per node in the order given. The same finding must give the same
   * message (no times or counters in it): a changed message is reported as a change. A failure that says nothing
   * about the nodes (the provider's API did not answer) may throw: every node of the batch is then `unknown`, with
   * the error's message.
   */
  check(nodes: readonly HealthTarget[], ctx: HealthCheckContext): Promise<NodeHealthCheck[]>;
}

/** A service action handed to an automator: the task name and `config.service.action.fields`. */
export interface ServiceActionCall {
  name: TaskName;
  service: string;
  fields: Record<string, string>;
}

/**
 * An automator plugin: BOOTSTRAP runs `bootstrap` of every automator listed in `config.automators`; the service
 * actions (INSTALL, CONFIGURE, INITIALIZE, START, STOP, REMOVE) run `runAction` of `config.service.action.type`.
 */
export interface AutomatorPlugin {
  kind: "automatortypes";
  spec: PluginSpec;
  /** Prepares the node for this automator. Must be idempotent: it reruns on every add-services and configure. */
  bootstrap(ctx: PluginContext): Promise<PluginOutcome>;
  runAction(ctx: PluginContext, action: ServiceActionCall): Promise<PluginOutcome>;
  close?(): Promise<void>;
}

export type Plugin = ProviderPlugin | AutomatorPlugin;
