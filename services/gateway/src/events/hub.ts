import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { liveClusterEventOf, liveClusterEventsFilter } from "@corral/contracts";
import type { Logger } from "@corral/shared";
import { StreamedEvent, type EventScope } from "./live-event.js";
import { RecentEvents } from "./recent-events.js";

/** Receives the live events of its scope, in stream order. */
export interface LiveListener {
  deliver(event: StreamedEvent): void;
  /** The gateway's NATS connection came back: events published meanwhile were not received and must be read back. */
  resync(): void;
}

/**
 * The gateway's one subscription to live cluster events (the events stream republishes each stored event with
 * its sequence), fanned out in process to the listeners of its tenant and cluster: no consumer per client, and
 * nothing a client does reaches NATS.
 */
export interface EventHub {
  listen(scope: EventScope, listener: LiveListener): () => void;
  /** A cluster's events after `afterSeq` from memory, when all of them are held (see RecentEvents). */
  recent(scope: EventScope, afterSeq: number): StreamedEvent[] | undefined;
  stop(): void;
}

const keyOf = (tenant: string, clusterId?: string) => (clusterId === undefined ? tenant : `${tenant}\u0000${clusterId}`);

/** `maxRecentEvents`: live events kept in memory for replays (0: none). */
export function openEventHub(nc: NatsConnection, log: Logger, maxRecentEvents: number): EventHub {
  const listeners = new Map<string, Set<LiveListener>>();
  const recent = new RecentEvents(maxRecentEvents);
  const fanOut = (key: string, event: StreamedEvent) => {
    const set = listeners.get(key);
    if (set) for (const l of set) l.deliver(event);
  };
  const sub: Subscription = nc.subscribe(liveClusterEventsFilter, {
    callback: (err, msg) => {
      if (err) return void log.warn("live events subscription failed", { err });
      const scope = liveClusterEventOf(msg.subject);
      const seq = Number(msg.headers?.get("Nats-Sequence"));
      if (!scope || !Number.isSafeInteger(seq)) return;
      // Decoded only when a client gets it now, or when it is the first of its cluster held for replays. Copied:
      // `msg.data` is a view into nats.js's socket read buffer, which a held event would keep alive whole.
      const streamed = new StreamedEvent(seq, msg.data.slice());
      const key = keyOf(scope.tenant, scope.clusterId);
      const tenantKey = keyOf(scope.tenant);
      if ((listeners.has(key) || listeners.has(tenantKey) || !recent.holds(key)) && !streamed.decodes()) {
        return void log.warn("undecodable cluster event", { subject: msg.subject, seq });
      }
      recent.add(key, streamed);
      fanOut(key, streamed);
      fanOut(tenantKey, streamed);
    },
  });
  let stopped = false;
  void (async () => {
    for await (const s of nc.status()) {
      if (stopped) break;
      if (s.type !== "reconnect") continue;
      recent.clear();
      for (const set of listeners.values()) for (const l of set) l.resync();
    }
  })().catch(() => {});
  return {
    listen(scope, listener) {
      const key = keyOf(scope.tenant, scope.clusterId);
      let set = listeners.get(key);
      if (!set) listeners.set(key, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0 && listeners.get(key) === set) listeners.delete(key);
      };
    },
    recent: (scope, afterSeq) => (scope.clusterId === undefined ? undefined : recent.after(keyOf(scope.tenant, scope.clusterId), afterSeq)),
    stop() {
      stopped = true;
      sub.unsubscribe();
    },
  };
}
