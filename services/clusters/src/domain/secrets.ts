import {
  redactProvider,
  redactText,
  secretValues,
  sensitiveFieldsOf,
  type JsonObject,
  type PluginSpec,
} from "@corral/contracts";
import type { ClusterNode, ClusterRecord } from "./records.js";

/** The text forms of the secret fields among `fields`, given the provider type's specification. */
export const secretsOf = (fields: JsonObject, spec: PluginSpec | undefined): string[] => secretValues(fields, sensitiveFieldsOf(spec));

/** `o` with none of `secrets` in its `stdout` and `stderr`; `o` itself when they showed none. */
export function outputWithoutSecrets<T extends { stdout?: string; stderr?: string }>(o: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return o;
  const stdout = o.stdout === undefined ? undefined : redactText(o.stdout, secrets);
  const stderr = o.stderr === undefined ? undefined : redactText(o.stderr, secrets);
  if (stdout === o.stdout && stderr === o.stderr) return o;
  return { ...o, ...(stdout !== undefined ? { stdout } : {}), ...(stderr !== undefined ? { stderr } : {}) };
}

/**
 * The cluster and its nodes as an ordinary user may see them: the secret fields of the cluster's provider (as
 * copied at creation) redacted, in the provider and wherever their values appear in the nodes' action output.
 */
export function withoutProviderSecrets(
  cluster: ClusterRecord,
  nodes: ClusterNode[],
  spec: PluginSpec | undefined,
): { cluster: ClusterRecord; nodes: ClusterNode[] } {
  const sensitive = sensitiveFieldsOf(spec);
  const secrets = secretValues(cluster.provider.provisioner, sensitive);
  const provider = redactProvider(cluster.provider, sensitive);
  return {
    cluster: provider === cluster.provider ? cluster : { ...cluster, provider },
    nodes: secrets.length === 0 ? nodes : nodes.map((n) => ({ ...n, actions: n.actions.map((a) => outputWithoutSecrets(a, secrets)) })),
  };
}
