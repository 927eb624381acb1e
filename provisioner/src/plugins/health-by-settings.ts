import { createHash } from "node:crypto";
import type { HealthTarget, NodeHealthCheck } from "@corral/contracts";
import type { HealthCheckContext, ProviderHealth } from "./types.js";

/** A node's provider settings as a plugin reads them: parsed, or why not. */
export type SettingsReading<S> = { ok: true; settings: S } | { ok: false; error: string };

export interface HealthBySettingsOptions<S> {
  /** Names the provider in the message of a batch whose settings do not parse (`ec2: region is required`). */
  provider: string;
  /** The node's provider settings; called for every node of every round, so cheap and never throwing. */
  settingsOf(node: HealthTarget): SettingsReading<S>;
  /**
   * What one API client is made from (endpoint, region, account, credential): nodes with the same key are checked
   * together. It may hold a secret: only its hash names the batch.
   */
  clientKey(settings: S): string;
  /** The findings of one batch's nodes, in the order given, with the settings they share. */
  checkBatch(settings: S, nodes: readonly HealthTarget[], ctx: HealthCheckContext): Promise<NodeHealthCheck[]>;
}

/**
 * A provider's health checks batched by the API client its nodes' settings make: one `checkBatch` per endpoint and
 * account. Nodes whose settings do not parse are not checked; a batch whose settings stop parsing between the two
 * calls answers `unknown` for every node.
 */
export function healthBySettings<S>(options: HealthBySettingsOptions<S>): ProviderHealth {
  const { provider, settingsOf, clientKey, checkBatch } = options;
  return {
    batchOf(node) {
      const parsed = settingsOf(node);
      return parsed.ok ? createHash("sha256").update(clientKey(parsed.settings)).digest("base64url") : undefined;
    },
    async check(nodes, ctx) {
      const parsed: SettingsReading<S> = nodes.length > 0 ? settingsOf(nodes[0]!) : { ok: false, error: "no settings" };
      if (!parsed.ok) return nodes.map(() => ({ state: "unknown", message: `${provider}: ${parsed.error}` }));
      return checkBatch(parsed.settings, nodes, ctx);
    },
  };
}
