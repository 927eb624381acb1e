/**
 * A Server-Sent Events reader that resumes: when the stream ends or breaks (the server closes a connection that
 * fell behind, replayed its limit, or went away) it reconnects with `Last-Event-ID`, so no event is missed.
 */
import { ApiError, UnreachableError, errorBodyOf } from "../errors.js";
import { describeFetchError } from "./api-client.js";

export interface ServerSentEvent {
  /** The `id:` field; absent for events without one. */
  id?: string;
  /** The `event:` field; "message" when absent. */
  event: string;
  data: string;
}

export interface EventStreamOptions {
  headers: Record<string, string>;
  /** Reconnects in a row without receiving an event before giving up. @default 5 */
  maxReconnects?: number;
  /** @default 500 */
  reconnectDelayMs?: number;
}

/** Events of `url` until the consumer stops; an error answer to a (re)connect is thrown as an ApiError. */
export async function* readEventStream(url: string, options: EventStreamOptions): AsyncGenerator<ServerSentEvent> {
  let lastEventId: string | undefined;
  let failures = 0;
  for (;;) {
    const abort = new AbortController();
    try {
      const response = await connect(url, options.headers, lastEventId, abort.signal);
      for await (const event of parseEvents(response)) {
        failures = 0;
        if (event.id !== undefined) lastEventId = event.id;
        yield event;
      }
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if (++failures > (options.maxReconnects ?? 5)) throw err;
    } finally {
      abort.abort();
    }
    await new Promise((resolve) => setTimeout(resolve, options.reconnectDelayMs ?? 500));
  }
}

async function connect(url: string, headers: Record<string, string>, lastEventId: string | undefined, signal: AbortSignal): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { ...headers, Accept: "text/event-stream", ...(lastEventId !== undefined ? { "Last-Event-ID": lastEventId } : {}) },
      signal,
    });
  } catch (err) {
    throw new UnreachableError(`cannot reach ${url}: ${describeFetchError(err)}`);
  }
  if (response.status !== 200) throw new ApiError(response.status, errorBodyOf(response.status, await response.text()));
  return response;
}

/** The events of one response body (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
async function* parseEvents(response: Response): AsyncGenerator<ServerSentEvent> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let buffer = "";
  let fields: { id?: string; event?: string; data: string[] } = { data: [] };
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r\n|\n|\r/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
      if (line === "") {
        if (fields.data.length > 0) yield { ...(fields.id !== undefined ? { id: fields.id } : {}), event: fields.event ?? "message", data: fields.data.join("\n") };
        fields = { data: [] };
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (name === "data") fields.data.push(value);
      else if (name === "id") fields.id = value;
      else if (name === "event") fields.event = value;
    }
  }
}
