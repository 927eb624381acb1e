import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { clusterEventFilter, decode, streams, tenantClusterEventFilter, type ClusterStreamEvent } from "@corral/contracts";
import { jsRequests } from "@corral/shared";
import { StreamedEvent, type EventScope } from "./live-event.js";

/** Past events of a scope after a sequence, read from the events stream in order. */
export interface EventHistory {
  /**
   * Up to `max` events of `scope` with a sequence above `afterSeq`, oldest first; `more` when there were more.
   * Direct gets by subject filter: no consumer is made, whatever the number of clients.
   */
  read(scope: EventScope, afterSeq: number, max: number): Promise<{ events: StreamedEvent[]; more: boolean }>;
  /** The sequence of the stream's newest event (0 when it has none): where a live-only subscription starts. */
  lastSeq(): Promise<number>;
}

export const scopeFilter = (scope: EventScope) =>
  scope.clusterId === undefined ? tenantClusterEventFilter(scope.tenant) : clusterEventFilter(scope.tenant, scope.clusterId);

export function eventHistory(nc: NatsConnection): EventHistory {
  const js = jsRequests(nc);
  return {
    async read(scope, afterSeq, max) {
      const filter = scopeFilter(scope);
      const events: StreamedEvent[] = [];
      let next = afterSeq + 1;
      while (events.length <= max) {
        const stored = await js.nextBySubject(streams.events, filter, next);
        if (!stored) return { events, more: false };
        if (events.length === max) return { events, more: true };
        events.push(new StreamedEvent(stored.seq, decode<ClusterStreamEvent>(stored.data)));
        next = stored.seq + 1;
      }
      return { events, more: true };
    },
    async lastSeq() {
      const jsm = await jetstreamManager(nc);
      return (await jsm.streams.info(streams.events)).state.last_seq;
    },
  };
}
