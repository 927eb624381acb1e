import type { TaskResult } from "@corral/contracts";
import type { ReadingDeps } from "../../adapters/deps.js";
import { outputWithoutSecrets, secretsOf } from "../../domain/secrets.js";

/**
 * Results without the provider fields a request gave: a failed task's output is kept, so it must not show them
 * (they are not kept); the consumer erases a stored results message that showed them once it is applied.
 */

/** The secret values among the provider fields a plan's request gave. */
export async function requestSecretsOf(deps: ReadingDeps, clusterId: string, planId: string): Promise<string[]> {
  const fields = await deps.credentials.get(clusterId, planId);
  if (Object.keys(fields).length === 0) return [];
  const cluster = await deps.clusters.fixedPartsOf(clusterId);
  return secretsOf(fields, cluster ? await deps.tenancy.providerType(cluster.provider.providertype) : undefined);
}

/** `raw` without `secrets()` in its output; `raw` itself for a success or a result without output (nothing is read). */
export async function withoutRequestSecrets(raw: TaskResult, secrets: () => Promise<string[]>): Promise<TaskResult> {
  return raw.status === 0 || (!raw.stdout && !raw.stderr) ? raw : outputWithoutSecrets(raw, await secrets());
}
