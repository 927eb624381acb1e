import { randomUUID } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, kvKey } from "@corral/contracts";
import { createValue, openBucket, readValue, sleep, updateValue, type KV, type Logger } from "@corral/shared";

/** The lease that makes one instance the one that delivers (key `_leader` of the deliveries bucket). */
interface Lease {
  owner: string;
  /** ms since the epoch. */
  until: number;
}

export interface Leadership {
  /** Ends the renewals (and the lease, so another instance takes over at once). Idempotent. */
  stop(): Promise<void>;
}

export interface LeadershipOptions {
  nc: NatsConnection;
  log: Logger;
  /** How long a lease lasts unless renewed; an instance killed holding it is replaced after at most this. @default 15000 */
  leaseMs?: number;
  /** Runs while this instance holds the lease; `signal` aborts when it is lost or the instance stops. */
  lead(signal: AbortSignal): Promise<void>;
}

/**
 * One instance of the webhooks service at a time delivers (so the order of each lane holds, and no delivery is
 * attempted twice at once): the one holding the lease, renewed by compare-and-set every third of its length. The
 * others try to take it as it runs out.
 */
export async function startLeadership(options: LeadershipOptions): Promise<Leadership> {
  const { nc, log } = options;
  const leaseMs = options.leaseMs ?? 15_000;
  const kv: KV = await openBucket(nc, buckets.webhookDeliveries);
  const key = kvKey("_leader");
  const me = randomUUID();
  const stopped = new AbortController();
  let revision: number | undefined;

  /** Takes or renews the lease; true while this instance holds it. */
  const hold = async (): Promise<boolean> => {
    const lease: Lease = { owner: me, until: Date.now() + leaseMs };
    const current = await readValue<Lease>(kv, key);
    if (!current) {
      revision = await createValue(kv, key, lease);
      return revision !== undefined;
    }
    if (current.value.owner !== me && current.value.until > Date.now()) return false;
    revision = await updateValue(kv, key, lease, current.revision);
    return revision !== undefined;
  };

  const loop = (async () => {
    while (!stopped.signal.aborted) {
      const held = await hold().catch((err: unknown) => {
        log.warn("could not take the delivery lease", { err });
        return false;
      });
      if (!held) {
        await sleep(Math.max(100, leaseMs / 5), stopped.signal).catch(() => {});
        continue;
      }
      log.info("delivering webhooks");
      const lost = new AbortController();
      const onStop = () => lost.abort();
      stopped.signal.addEventListener("abort", onStop, { once: true });
      const leading = options.lead(lost.signal).catch((err: unknown) => log.error("webhook delivery stopped", { err }));
      while (!lost.signal.aborted) {
        await sleep(leaseMs / 3, lost.signal).catch(() => {});
        if (lost.signal.aborted) break;
        const renewed = await hold().catch(() => false);
        if (!renewed) {
          log.warn("lost the delivery lease");
          lost.abort();
        }
      }
      stopped.signal.removeEventListener("abort", onStop);
      await leading;
    }
  })();

  return {
    async stop() {
      if (stopped.signal.aborted) return loop;
      stopped.abort();
      await loop;
      // Handing the lease back lets another instance deliver at once.
      const current = await readValue<Lease>(kv, key).catch(() => undefined);
      if (current?.value.owner === me) await updateValue(kv, key, { owner: me, until: 0 }, current.revision).catch(() => {});
    },
  };
}
