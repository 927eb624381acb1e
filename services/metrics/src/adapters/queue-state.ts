import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager, type ConsumerInfo, type JetStreamManager } from "@nats-io/jetstream";
import { streams, streamSubjects, taskConsumerName, taskSubject, type QueueCounts } from "@corral/contracts";
import { openTenantReader } from "@corral/shared";

export type { QueueCounts };

/** Reads task queue state from JetStream: the per-tenant durable task consumers of CORRAL_TASKS. */
export interface QueueStateReader {
  /** Every tenant name (the tenants bucket). */
  tenants(): Promise<string[]>;
  /** Counts per tenant, zeros for a tenant without tasks. */
  read(tenants: readonly string[]): Promise<Record<string, QueueCounts>>;
}

const counts = (inProgress: number, queued: number): QueueCounts => ({ inProgress, queued, total: inProgress + queued });

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: unknown; api_error?: { code?: number } };
  return (
    e?.name === "ConsumerNotFoundError" ||
    e?.name === "StreamNotFoundError" ||
    e?.api_error?.code === 404 ||
    /not found/i.test(e?.message ?? "")
  );
}

/**
 * A tenant's consumer knows `num_ack_pending` (in progress) and `num_pending` (queued). Before the tenant's first
 * worker has created its consumer, tasks already published wait in the stream: they count as queued (the
 * stream's per-subject message count; work-queue retention keeps exactly the unacknowledged ones).
 */
export async function openQueueStateReader(nc: NatsConnection): Promise<QueueStateReader> {
  const jsm: JetStreamManager = await jetstreamManager(nc);
  const tenantReader = await openTenantReader(nc);

  const consumerInfos = async (tenants: readonly string[]): Promise<Map<string, ConsumerInfo>> => {
    const found = new Map<string, ConsumerInfo>();
    try {
      if (tenants.length <= 4) {
        await Promise.all(
          tenants.map(async (t) => {
            try {
              found.set(taskConsumerName(t), await jsm.consumers.info(streams.tasks, taskConsumerName(t)));
            } catch (err) {
              if (!isNotFound(err)) throw err;
            }
          }),
        );
      } else {
        for await (const info of jsm.consumers.list(streams.tasks)) found.set(info.name, info);
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return found;
  };

  const waitingInStream = async (tenants: readonly string[]): Promise<Map<string, number>> => {
    const out = new Map<string, number>();
    if (tenants.length === 0) return out;
    const only = tenants.length === 1 ? tenants[0] : undefined;
    try {
      const info = await jsm.streams.info(streams.tasks, { subjects_filter: only !== undefined ? taskSubject(only) : streamSubjects[streams.tasks] });
      for (const t of tenants) out.set(t, info.state.subjects?.[taskSubject(t)] ?? 0);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return out;
  };

  return {
    async tenants() {
      return tenantReader.names();
    },
    async read(tenants) {
      const infos = await consumerInfos(tenants);
      const withoutConsumer = tenants.filter((t) => !infos.has(taskConsumerName(t)));
      const waiting = await waitingInStream(withoutConsumer);
      const out: Record<string, QueueCounts> = {};
      for (const t of tenants) {
        const info = infos.get(taskConsumerName(t));
        out[t] = info ? counts(info.num_ack_pending, info.num_pending) : counts(0, waiting.get(t) ?? 0);
      }
      return out;
    },
  };
}
