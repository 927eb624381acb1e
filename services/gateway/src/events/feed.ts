import type { EventHistory } from "./history.js";
import type { EventHub, LiveListener } from "./hub.js";
import type { EventScope, StreamedEvent } from "./live-event.js";

/** Where a feed sends what it reads. */
export interface FeedOutput {
  event(event: StreamedEvent): void;
  /** More past events than one replay holds (or than fit while replaying): the client resumes after `lastId`. */
  replayLimit(lastId: number): void;
  /** Past events could not be read (JetStream unavailable). */
  failed(err: unknown): void;
}

export interface FeedDeps {
  hub: EventHub;
  history: EventHistory;
  maxReplayEvents: number;
}

/**
 * One subscription's events: the past ones after `afterSeq` read from the stream, then the live ones, without a
 * gap or a repeat. It listens live before reading the past, holds what arrives meanwhile, and sends each
 * sequence once, in order. The past comes from the hub's memory when it holds all of it (a burst of new clients
 * costs no stream reads), else from the stream. When the gateway's NATS connection comes back it reads back
 * what it missed.
 */
export class EventFeed implements LiveListener {
  private lastSent: number;
  private replaying = false;
  private held: StreamedEvent[] = [];
  private unlisten: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly scope: EventScope,
    afterSeq: number,
    private readonly deps: FeedDeps,
    private readonly out: FeedOutput,
  ) {
    this.lastSent = afterSeq;
  }

  /** Starts listening and replays; resolves once the past is sent (or the feed ended). */
  start(): Promise<void> {
    this.unlisten = this.deps.hub.listen(this.scope, this);
    return this.catchUp();
  }

  stop(): void {
    this.stopped = true;
    this.unlisten?.();
    this.held = [];
  }

  deliver(event: StreamedEvent): void {
    if (this.stopped) return;
    if (!this.replaying) return this.send(event);
    this.held.push(event);
    if (this.held.length > this.deps.maxReplayEvents) this.end(() => this.out.replayLimit(this.lastSent));
  }

  resync(): void {
    if (!this.replaying && !this.stopped) void this.catchUp();
  }

  private send(event: StreamedEvent): void {
    if (event.id <= this.lastSent) return;
    this.lastSent = event.id;
    this.out.event(event);
  }

  private end(tell: () => void): void {
    if (this.stopped) return;
    this.stop();
    tell();
  }

  private async catchUp(): Promise<void> {
    const held = this.deps.hub.recent(this.scope, this.lastSent);
    if (held) {
      // From memory, in this same turn: nothing live can come in between.
      for (const e of held) this.send(e);
      return;
    }
    this.replaying = true;
    try {
      const { events, more } = await this.deps.history.read(this.scope, this.lastSent, this.deps.maxReplayEvents);
      if (this.stopped) return;
      for (const e of events) this.send(e);
      if (more) return this.end(() => this.out.replayLimit(this.lastSent));
      const held = this.held.sort((a, b) => a.id - b.id);
      this.held = [];
      this.replaying = false;
      for (const e of held) this.send(e);
    } catch (err) {
      this.end(() => this.out.failed(err));
    }
  }
}
