import type { HttpResponse, WebSocketBehavior } from "uWebSockets.js";
import type { NatsConnection } from "@nats-io/transport-node";
import { endpoints } from "@corral/contracts";
import type { Logger } from "@corral/shared";
import type { CallerCheck } from "../caller.js";
import type { Exchange } from "../http.js";
import { createRouter } from "../router.js";
import { assertClusterVisible } from "./access.js";
import { Connections } from "./connections.js";
import { eventHistory } from "./history.js";
import { openEventHub } from "./hub.js";
import { eventStreamLimits, type EventStreamOptions } from "./options.js";
import { serveClusterEvents, type SseRequest } from "./sse.js";
import { eventSocketBehavior } from "./socket.js";

export type { EventStreamOptions } from "./options.js";

export interface EventStreamsDeps {
  nc: NatsConnection;
  log: Logger;
  caller: CallerCheck;
  /** How long to wait for the clusters service's visibility check. */
  requestTimeoutMs: number;
  options?: EventStreamOptions;
}

/** The gateway's live event streams: SSE per cluster and the WebSocket, over one NATS subscription. */
export interface EventStreams {
  /** The cluster id when `method path` (under the version segment) is the SSE route. */
  sseClusterId(method: string, path: string): string | undefined;
  /** What to answer a request on a stream's path that cannot be one (another method; the socket without upgrade). */
  misuse(method: string, path: string): StreamMisuse | undefined;
  serveSse(res: HttpResponse, ex: Exchange, request: SseRequest): Promise<void>;
  /** Path of the WebSocket under the version segment. */
  socketPath: string;
  socketBehavior: WebSocketBehavior<never>;
  /** Open streams now. */
  readonly connectionCount: number;
  /** Tells every client the gateway is stopping and closes its stream. */
  stop(): void;
}

export interface StreamMisuse {
  status: 405 | 426;
  code: string;
  message: string;
  headers: Record<string, string>;
}

export function openEventStreams(deps: EventStreamsDeps): EventStreams {
  const limits = eventStreamLimits(deps.options);
  const hub = openEventHub(deps.nc, deps.log, limits.maxRecentEvents);
  const history = eventHistory(deps.nc);
  const connections = new Connections(limits.maxConnections, limits.heartbeatMs, deps.caller);
  const streamDeps = {
    hub,
    history,
    connections,
    maxReplayEvents: limits.maxReplayEvents,
    maxBufferedBytes: limits.maxBufferedBytes,
    assertVisible: (identity: Parameters<typeof assertClusterVisible>[1], clusterId: string) =>
      assertClusterVisible(deps.nc, identity, clusterId, deps.requestTimeoutMs),
  };
  const { route } = endpoints["gateway.clusterEvents"].stream;
  const socketPath = endpoints["gateway.events"].stream.route.path;
  const sseRoute = createRouter([{ method: route.method, pattern: route.path }]);
  return {
    sseClusterId(method, path) {
      const match = sseRoute(method, path);
      return match.kind === "found" ? match.params["id"] : undefined;
    },
    misuse(method, path): StreamMisuse | undefined {
      if (sseRoute(method, path).kind === "method_not_allowed") {
        return { status: 405, code: "method_not_allowed", message: `${method} is not allowed on an event stream; use GET`, headers: { allow: "GET" } };
      }
      if (path.replace(/\/+$/, "") !== socketPath) return undefined;
      const message = 'this path is a WebSocket: connect with GET and "Upgrade: websocket"';
      return { status: 426, code: "upgrade_required", message, headers: { upgrade: "websocket" } };
    },
    serveSse: (res, ex, request) => serveClusterEvents(streamDeps, res, ex, request),
    socketPath,
    socketBehavior: eventSocketBehavior({ ...streamDeps, caller: deps.caller, lastSeq: () => history.lastSeq() }) as WebSocketBehavior<never>,
    get connectionCount() {
      return connections.size;
    },
    stop() {
      connections.closeAll({ reason: "shutdown", message: "the gateway is stopping; reconnect to resume" });
      hub.stop();
    },
  };
}
