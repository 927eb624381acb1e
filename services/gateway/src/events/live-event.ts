import { clientEventsOf, decode, type ClusterStreamEvent } from "@corral/contracts";

/**
 * One stored cluster event as the gateway hands it to clients: its stream sequence is its id. Made from the
 * event or from its msgpack bytes, decoded on first use: the gateway receives every live event, and most reach
 * no client. A stored `plan.progress` may hold the `task.ended` events it records: clients get each of those
 * first, as events of their own under the same id (`clientEventsOf`).
 */
export class StreamedEvent {
  private decoded: ClusterStreamEvent | undefined;
  private bytes: Uint8Array | undefined;
  private clientEvents: ClusterStreamEvent[] | undefined;
  private json: string[] | undefined;
  private sse: string | undefined;
  /** Socket messages by subscription name: an event usually goes to two (its cluster's and its tenant's). */
  private socket: Map<string, string[]> | undefined;

  constructor(
    readonly id: number,
    event: ClusterStreamEvent | Uint8Array,
  ) {
    if (event instanceof Uint8Array) this.bytes = event;
    else this.decoded = event;
  }

  /** The event; throws when its bytes do not decode (see {@link decodes}). */
  get event(): ClusterStreamEvent {
    if (this.decoded === undefined) {
      this.decoded = decode<ClusterStreamEvent>(this.bytes as Uint8Array);
      this.bytes = undefined;
    }
    return this.decoded;
  }

  /** Whether the event decodes (decoding it, once). */
  decodes(): boolean {
    try {
      return typeof this.event === "object" && this.event !== null;
    } catch {
      return false;
    }
  }

  /** What clients get of it, in order: usually the event alone. */
  get events(): ClusterStreamEvent[] {
    return (this.clientEvents ??= clientEventsOf(this.event));
  }

  /** The JSON of each of {@link events}, made once however many clients get them. */
  private get eventJson(): string[] {
    return (this.json ??= this.events.map((e) => JSON.stringify(e)));
  }

  /**
   * The Server-Sent Events frames, one per client event, written together. Only the last carries the id: a client
   * cut off between them resumes (`Last-Event-ID`) from the id before, so it gets them all again rather than missing
   * the rest.
   */
  get sseFrame(): string {
    const last = this.events.length - 1;
    return (this.sse ??= this.events
      .map((e, i) => `${i === last ? `id: ${this.id}\n` : ""}event: ${e.type}\ndata: ${this.eventJson[i]}\n\n`)
      .join(""));
  }

  /**
   * The WebSocket messages (`EventSocketMessage` of type `event`) for one subscription, one per client event, sent
   * together under the same id.
   */
  socketMessages(subscription: string): string[] {
    this.socket ??= new Map();
    let messages = this.socket.get(subscription);
    if (messages === undefined) {
      const prefix = `{"type":"event","subscription":${JSON.stringify(subscription)},"id":${this.id},"event":`;
      messages = this.eventJson.map((json) => `${prefix}${json}}`);
      this.socket.set(subscription, messages);
    }
    return messages;
  }
}

/** What a subscription follows: one cluster of a tenant, or every cluster of a tenant. */
export type EventScope = { tenant: string; clusterId: string } | { tenant: string; clusterId?: undefined };
