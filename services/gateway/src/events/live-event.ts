import { decode, type ClusterStreamEvent } from "@corral/contracts";

/**
 * One stored cluster event as the gateway hands it to clients: its stream sequence is its id. Made from the
 * event or from its msgpack bytes, decoded on first use: the gateway receives every live event, and most reach
 * no client.
 */
export class StreamedEvent {
  private decoded: ClusterStreamEvent | undefined;
  private bytes: Uint8Array | undefined;
  private json: string | undefined;
  private sse: string | undefined;
  /** Socket messages by subscription name: an event usually goes to two (its cluster's and its tenant's). */
  private socket: Map<string, string> | undefined;

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

  /** The event's JSON, made once however many clients get it. */
  get eventJson(): string {
    return (this.json ??= JSON.stringify(this.event));
  }

  /** The Server-Sent Events frame. */
  get sseFrame(): string {
    return (this.sse ??= `id: ${this.id}\nevent: ${this.event.type}\ndata: ${this.eventJson}\n\n`);
  }

  /** The WebSocket message (`EventSocketMessage` of type `event`) for one subscription. */
  socketMessage(subscription: string): string {
    this.socket ??= new Map();
    let message = this.socket.get(subscription);
    if (message === undefined) {
      message = `{"type":"event","subscription":${JSON.stringify(subscription)},"id":${this.id},"event":${this.eventJson}}`;
      this.socket.set(subscription, message);
    }
    return message;
  }
}

/** What a subscription follows: one cluster of a tenant, or every cluster of a tenant. */
export type EventScope = { tenant: string; clusterId: string } | { tenant: string; clusterId?: undefined };
