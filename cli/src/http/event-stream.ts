/**
 * A Server-Sent Events reader that resumes: when the stream ends or breaks (the server closes a connection that
 * fell behind, replayed its limit, or went away) it reconnects with `Last-Event-ID`, so no event is missed.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { serverSentEvents, type ServerSentEvent } from "@corral/contracts";
import { ApiError, UnreachableError, errorBodyOf } from "../errors.js";
import { describeFetchError } from "./api-client.js";

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
      for await (const event of response.body ? serverSentEvents(response.body) : []) {
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
    await sleep(options.reconnectDelayMs ?? 500);
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
