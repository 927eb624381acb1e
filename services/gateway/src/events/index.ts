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
  serveSse(res: HttpResponse, ex: Exchange, request: SseRequest): Promise<void>;
  /** Path of the WebSocket under the version segment. */
  socketPath: string;
  socketBehavior: WebSocketBehavior<never>;
  /** Open streams now. */
  readonly connectionCount: number;
  /** Tells every client the gateway is stopping and closes its stream. */
  stop(): void;
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
  const sseRoute = createRouter([{ method: route.method, pattern: route.path }]);
  return {
    sseClusterId(method, path) {
      const match = sseRoute(method, path);
      return match.kind === "found" ? match.params["id"] : undefined;
    },
    serveSse: (res, ex, request) => serveClusterEvents(streamDeps, res, ex, request),
    socketPath: endpoints["gateway.events"].stream.route.path,
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
