import type { HttpResponse } from "uWebSockets.js";
import { BadRequestError, UnavailableError, type Identity } from "@corral/contracts";
import type { Exchange } from "../http.js";
import { capacityMessage, type Closing, type Connections, type StreamConnection } from "./connections.js";
import { EventFeed, type FeedDeps } from "./feed.js";
import { SseWriter } from "./sse-writer.js";

/** What the SSE route needs of a request, read before any await. */
export interface SseRequest {
  identity: Identity;
  clusterId: string;
  /** The `Last-Event-ID` header ("" when absent). */
  lastEventId: string;
  /** `?since=<id>`, for clients that cannot set the header. */
  since: string | undefined;
  authorization: string;
}

export interface SseDeps extends FeedDeps {
  connections: Connections;
  maxBufferedBytes: number;
  assertVisible(identity: Identity, clusterId: string): Promise<void>;
}

/** Parses an event id to resume after: a sequence, 0 or more. */
export function resumeId(value: string | undefined, what: string): number {
  if (value === undefined || value === "") return 0;
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new BadRequestError(`${what} must be the id of an event (a whole number of 0 or more), not "${value.slice(0, 40)}"`);
  }
  return Number(value);
}

const closingFrame = (closing: Closing) => `event: closing\ndata: ${JSON.stringify(closing)}\n\n`;

/**
 * `GET /v2/clusters/{id}/events`: the cluster's events as Server-Sent Events, from the start of its history or
 * after `Last-Event-ID`, then live.
 */
export async function serveClusterEvents(deps: SseDeps, res: HttpResponse, ex: Exchange, request: SseRequest): Promise<void> {
  const afterSeq = resumeId(request.lastEventId || request.since, request.lastEventId ? "Last-Event-ID" : "since");
  if (deps.connections.full) throw new UnavailableError(capacityMessage(deps.connections.max));
  await deps.assertVisible(request.identity, request.clusterId);
  if (ex.finished) return;
  if (deps.connections.full) throw new UnavailableError(capacityMessage(deps.connections.max));

  let feed: EventFeed | undefined;
  const connection: StreamConnection = {
    authorization: request.authorization,
    heartbeat: () => writer.write(": heartbeat\n\n"),
    close(closing) {
      feed?.stop();
      deps.connections.remove(connection);
      writer.end(closingFrame(closing));
    },
  };
  const writer = new SseWriter(res, deps.maxBufferedBytes, () =>
    connection.close({
      reason: "too_slow",
      message: `closed: the client fell more than ${deps.maxBufferedBytes} bytes behind the events; reconnect with Last-Event-ID to resume`,
    }),
  );
  ex.onAbort(() => {
    feed?.stop();
    writer.aborted();
    deps.connections.remove(connection);
  });
  ex.markStreaming();
  deps.connections.add(connection);
  writer.open();
  feed = new EventFeed({ tenant: request.identity.tenant, clusterId: request.clusterId }, afterSeq, deps, {
    event: (e) => writer.write(e.sseFrame),
    replayLimit: (lastEventId) =>
      connection.close({
        reason: "replay_limit",
        message: `more past events than one connection replays (${deps.maxReplayEvents}); reconnect with Last-Event-ID ${lastEventId} for the rest`,
        lastEventId,
      }),
    failed: (err) => connection.close({ reason: "unavailable", message: `past events could not be read: ${(err as Error).message}` }),
  });
  await feed.start();
}
