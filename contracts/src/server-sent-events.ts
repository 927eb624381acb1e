/**
 * Reading a Server-Sent Events stream (https://html.spec.whatwg.org/multipage/server-sent-events.html), as the
 * gateway writes its cluster event streams: for the CLI and the console alike (no Node or browser API beyond
 * streams and TextDecoder).
 */

/** One event of a stream. */
export interface ServerSentEvent {
  /** The event's `id:` field; absent for an event without one. */
  id?: string;
  /** The `event:` field; "message" when absent. */
  event: string;
  /** The `data:` lines, joined with newlines. */
  data: string;
}

/** Splits an event stream's text, fed in chunks of any size, into events. */
export class ServerSentEventParser {
  private buffer = "";
  private id: string | undefined;
  private event: string | undefined;
  private data: string[] = [];

  /** The events `chunk` completes. */
  push(chunk: string): ServerSentEvent[] {
    this.buffer += chunk;
    const events: ServerSentEvent[] = [];
    let start = 0;
    for (;;) {
      const end = lineEnd(this.buffer, start);
      if (end === undefined) break;
      const line = this.buffer.slice(start, end.at);
      start = end.next;
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  private line(line: string): ServerSentEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + (line[colon + 1] === " " ? 2 : 1));
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.id = value;
    return undefined;
  }

  private dispatch(): ServerSentEvent | undefined {
    const { id, event, data } = this;
    this.id = this.event = undefined;
    this.data = [];
    if (data.length === 0) return undefined;
    return { ...(id !== undefined ? { id } : {}), event: event ?? "message", data: data.join("\n") };
  }
}

/**
 * Where the line starting at `from` ends (CR LF, LF or CR): the index of its end and of the next line; undefined
 * while it is incomplete (a CR last in the buffer may be the first half of CR LF).
 */
function lineEnd(text: string, from: number): { at: number; next: number } | undefined {
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === "\n") return { at: i, next: i + 1 };
    if (c === "\r") {
      if (i + 1 === text.length) return undefined;
      return { at: i, next: text[i + 1] === "\n" ? i + 2 : i + 1 };
    }
  }
  return undefined;
}

/** The events of a response body, until it ends. */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const parser = new ServerSentEventParser();
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    reader.releaseLock();
  }
}
