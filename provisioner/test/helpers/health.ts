import type { HealthTarget, NodeHealthCheck, TaskMessage } from "@corral/contracts";
import { silentLogger } from "@corral/shared";
import type { HealthCheckContext, PluginOutcome, ProviderPlugin } from "@corral/provisioner";

/** The health target of a node whose tasks gave these outcomes (as the worker records it after CONFIRM). */
export function healthTargetOf(task: TaskMessage, outcomes: readonly PluginOutcome[]): HealthTarget {
  const { config } = task;
  const last = <K extends "hostname" | "ipaddresses">(key: K) => outcomes.map((o) => o[key]).filter((v) => v !== undefined).at(-1);
  return {
    tenant: task.tenant,
    clusterId: task.clusterId,
    nodeId: task.nodeId,
    config: {
      hostname: (last("hostname") as string | undefined) ?? config.hostname,
      ipaddresses: (last("ipaddresses") as Record<string, string> | undefined) ?? config.ipaddresses,
      nodenum: config.nodenum,
      hardwaretype: config.hardwaretype,
      imagetype: config.imagetype,
      provider: config.provider,
      results: Object.assign({}, config.results, ...outcomes.map((o) => o.result ?? {})),
    },
    recordedAt: Date.now(),
  };
}

/** What the provisioner hands a provider's health check. */
export function healthContext(signal: AbortSignal = new AbortController().signal): HealthCheckContext {
  return { workDir: "/nonexistent", provisionerId: "p", signal, log: silentLogger };
}

/** The provider's findings of `nodes`, checked as one batch (all must be of one batch). */
export async function checkHealth(provider: ProviderPlugin, nodes: readonly HealthTarget[], signal?: AbortSignal): Promise<NodeHealthCheck[]> {
  const health = provider.health;
  if (!health) throw new Error(`provider ${provider.spec.name} checks no health`);
  const batches = new Set(nodes.map((n) => health.batchOf(n)));
  if (batches.size !== 1 || batches.has(undefined)) throw new Error(`nodes of ${batches.size} batches (${[...batches].join(", ")})`);
  return health.check(nodes, healthContext(signal));
}
