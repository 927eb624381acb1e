import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { streams } from "@corral/contracts";

/** How long and how much the audit log keeps (`audit.maxAgeDays`, `audit.maxBytes`). */
export interface AuditRetention {
  maxAgeDays: number;
  maxBytes: number;
}

const DAY_NS = 24 * 3600 * 1e9;

/**
 * Gives the audit stream (created by `ensureStreams`) the configured retention, when it differs; the launcher calls
 * it while preparing the bus (services may not update streams). Idempotent.
 */
export async function applyAuditRetention(nc: NatsConnection, retention: AuditRetention): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const { config } = await jsm.streams.info(streams.audit);
  const maxAge = Math.round(retention.maxAgeDays * DAY_NS);
  const maxBytes = Math.round(retention.maxBytes);
  if (config.max_age === maxAge && config.max_bytes === maxBytes) return;
  await jsm.streams.update(streams.audit, { ...config, max_age: maxAge, max_bytes: maxBytes });
}
