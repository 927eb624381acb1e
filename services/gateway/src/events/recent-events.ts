import type { StreamedEvent } from "./live-event.js";

interface ClusterEvents {
  events: StreamedEvent[];
  /** Holds the cluster's events from its very first one (a `cluster.status` without `previous`). */
  fromBeginning: boolean;
  /** The newest sequence dropped from `events` to bound it (0: none dropped). */
  droppedUpTo: number;
}

/**
 * The live events the gateway received lately, per cluster, so that a client opening a stream (or resuming)
 * gets the past from memory instead of reading the events stream: at a burst of connections, replays by direct
 * gets would queue behind each other and hold back the live events. Bounded: `maxEvents` in all, the clusters
 * with the oldest latest event dropped first. Answers only what it holds completely.
 */
export class RecentEvents {
  private readonly clusters = new Map<string, ClusterEvents>();
  private total = 0;
  /**
   * Every event from this sequence on is held, unless its cluster's events were dropped to bound them: the first
   * sequence received since the subscription (re)started, raised past the events of every cluster dropped whole.
   */
  private completeFrom: number | undefined;

  constructor(
    private readonly maxEvents: number,
    private readonly maxPerCluster = Math.max(1, Math.min(maxEvents, 2000)),
  ) {}

  /** Whether events of `key` are held already (or none are ever held): then {@link add} does not read the event. */
  holds(key: string): boolean {
    return this.maxEvents <= 0 || this.clusters.has(key);
  }

  /** Holds `event`, which must decode when it is the first of its cluster held (its type and `previous` are read). */
  add(key: string, event: StreamedEvent): void {
    if (this.maxEvents <= 0) return;
    this.completeFrom ??= event.id;
    let entry = this.clusters.get(key);
    if (entry) this.clusters.delete(key);
    else entry = { events: [], fromBeginning: event.event.type === "cluster.status" && event.event.previous === undefined, droppedUpTo: 0 };
    this.clusters.set(key, entry);
    entry.events.push(event);
    this.total++;
    if (entry.events.length > this.maxPerCluster) {
      entry.droppedUpTo = entry.events.shift()!.id;
      this.total--;
    }
    for (const [oldest, dropped] of this.clusters) {
      if (this.total <= this.maxEvents) break;
      this.clusters.delete(oldest);
      this.total -= dropped.events.length;
      this.completeFrom = Math.max(this.completeFrom, (dropped.events.at(-1)?.id ?? 0) + 1);
    }
  }

  /** The cluster's events after `afterSeq`, when every one of them is held; undefined otherwise. */
  after(key: string, afterSeq: number): StreamedEvent[] | undefined {
    const entry = this.clusters.get(key);
    if (!entry || this.completeFrom === undefined || entry.droppedUpTo > afterSeq) return undefined;
    if (!entry.fromBeginning && afterSeq < this.completeFrom - 1) return undefined;
    return entry.events.filter((e) => e.id > afterSeq && e.decodes());
  }

  /** Events may have been missed (the NATS connection came back): nothing held can be trusted to be complete. */
  clear(): void {
    this.clusters.clear();
    this.total = 0;
    this.completeFrom = undefined;
  }
}
