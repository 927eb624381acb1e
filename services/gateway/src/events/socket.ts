import type { WebSocket, WebSocketBehavior } from "uWebSockets.js";
import {
  BadRequestError,
  EVENT_SOCKET_PROTOCOL,
  ForbiddenError,
  isCorralError,
  socketCredentialsOf,
  UnavailableError,
  type EventSocketMessage,
  type Identity,
} from "@corral/contracts";
import type { CallerCheck } from "../caller.js";
import { Exchange } from "../http.js";
import { API_KEY_HEADER, TENANT_HEADER, USER_HEADER } from "../identity.js";
import { mayFollowTenant } from "./access.js";
import { capacityMessage, type Closing, type StreamConnection } from "./connections.js";
import { EventFeed } from "./feed.js";
import type { EventScope } from "./live-event.js";
import type { SseDeps } from "./sse.js";

/** Subscriptions one WebSocket may hold at once. */
export const MAX_SUBSCRIPTIONS_PER_SOCKET = 100;
/** Largest message a client may send (subscriptions are small). */
const MAX_CLIENT_MESSAGE_BYTES = 16 * 1024;

export interface SocketDeps extends SseDeps {
  caller: CallerCheck;
  lastSeq(): Promise<number>;
}

/** What the gateway keeps per WebSocket. */
interface SocketState {
  identity: Identity;
  authorization: string;
  feeds: Map<string, EventFeed>;
  connection?: StreamConnection;
  closed: boolean;
}

type Socket = WebSocket<SocketState>;

const CLOSE_CODES: Record<Closing["reason"], number> = {
  too_slow: 1008,
  replay_limit: 1008,
  token_invalid: 1008,
  unavailable: 1011,
  shutdown: 1001,
};

/** A subscribe or unsubscribe request, checked; throws a 400 saying what is wrong. */
function parseRequest(data: ArrayBuffer): { subscribe: boolean; scope: "tenant" | { clusterId: string }; since: number | undefined } {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(data).toString("utf8"));
  } catch (err) {
    throw new BadRequestError(`a message must be JSON: ${(err as Error).message}`);
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new BadRequestError("a message must be a JSON object");
  const m = value as Record<string, unknown>;
  if (m["type"] !== "subscribe" && m["type"] !== "unsubscribe") throw new BadRequestError('type must be "subscribe" or "unsubscribe"');
  const clusterId = m["clusterId"];
  const tenant = m["tenant"];
  if ((clusterId === undefined) === (tenant === undefined)) throw new BadRequestError("name either clusterId or tenant: true");
  if (tenant !== undefined && tenant !== true) throw new BadRequestError("tenant must be true (the caller's own tenant)");
  if (clusterId !== undefined && (typeof clusterId !== "string" || clusterId === "" || clusterId.length > 64)) {
    throw new BadRequestError("clusterId must be a cluster id (a non-empty string of at most 64 characters)");
  }
  const since = m["since"];
  if (since !== undefined && (typeof since !== "number" || !Number.isSafeInteger(since) || since < 0)) {
    throw new BadRequestError("since must be the id of an event (a whole number of 0 or more)");
  }
  return { subscribe: m["type"] === "subscribe", scope: tenant ? "tenant" : { clusterId: clusterId as string }, since };
}

const errorMessage = (err: unknown, subscription?: string): EventSocketMessage => {
  const base = isCorralError(err)
    ? { status: err.status, error: err.code, message: err.message }
    : { status: 500, error: "internal", message: "internal error" };
  return { type: "error", ...base, ...(subscription ? { subscription } : {}) };
};

/**
 * `/v2/events`: a WebSocket taking subscriptions (`EventSocketRequest`): one cluster (REST's visibility rules),
 * or the whole tenant (its admin only); each answers `subscribed`, then the events (`since` resumes after an
 * id; without it a cluster's history is replayed and a tenant starts live).
 */
export function eventSocketBehavior(deps: SocketDeps): WebSocketBehavior<SocketState> {
  const send = (ws: Socket, message: EventSocketMessage | string) => {
    const state = ws.getUserData();
    if (state.closed) return;
    if (ws.getBufferedAmount() > deps.maxBufferedBytes) {
      state.connection?.close({
        reason: "too_slow",
        message: `closed: the client fell more than ${deps.maxBufferedBytes} bytes behind the events; reconnect and subscribe with since to resume`,
      });
      return;
    }
    ws.send(typeof message === "string" ? message : JSON.stringify(message));
  };

  const subscribe = async (ws: Socket, scope: "tenant" | { clusterId: string }, since: number | undefined) => {
    const state = ws.getUserData();
    const name = scope === "tenant" ? "tenant" : `cluster:${scope.clusterId}`;
    if (state.feeds.has(name)) throw new BadRequestError(`already subscribed to ${name}`);
    if (state.feeds.size >= MAX_SUBSCRIPTIONS_PER_SOCKET) {
      throw new BadRequestError(`at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions per connection`);
    }
    let eventScope: EventScope;
    if (scope === "tenant") {
      if (!mayFollowTenant(state.identity)) {
        throw new ForbiddenError(`only the admin of tenant ${state.identity.tenant} may subscribe to the whole tenant; subscribe to clusters by id`);
      }
      eventScope = { tenant: state.identity.tenant };
    } else {
      await deps.assertVisible(state.identity, scope.clusterId);
      eventScope = { tenant: state.identity.tenant, clusterId: scope.clusterId };
    }
    const afterSeq = since ?? (scope === "tenant" ? await deps.lastSeq() : 0);
    if (state.closed || state.feeds.has(name)) return;
    const feed = new EventFeed(eventScope, afterSeq, deps, {
      event: (e) => {
        for (const message of e.socketMessages(name)) send(ws, message);
      },
      replayLimit: (lastId) => {
        state.feeds.delete(name);
        send(ws, {
          type: "error",
          status: 413,
          error: "replay_limit",
          message: `more past events than one subscription replays (${deps.maxReplayEvents}); subscribe again with since ${lastId} for the rest`,
          subscription: name,
        });
      },
      failed: (err) => {
        state.feeds.delete(name);
        send(ws, errorMessage(new UnavailableError(`past events could not be read: ${(err as Error).message}`), name));
      },
    });
    state.feeds.set(name, feed);
    send(ws, { type: "subscribed", subscription: name });
    await feed.start();
  };

  const unsubscribe = (ws: Socket, scope: "tenant" | { clusterId: string }) => {
    const state = ws.getUserData();
    const name = scope === "tenant" ? "tenant" : `cluster:${scope.clusterId}`;
    const feed = state.feeds.get(name);
    if (!feed) throw new BadRequestError(`not subscribed to ${name}`);
    feed.stop();
    state.feeds.delete(name);
    send(ws, { type: "unsubscribed", subscription: name });
  };

  return {
    maxPayloadLength: MAX_CLIENT_MESSAGE_BYTES,
    // uWS never drops or closes on its own: the limit above closes a slow client with a message.
    maxBackpressure: deps.maxBufferedBytes * 4 + MAX_CLIENT_MESSAGE_BYTES,
    closeOnBackpressureLimit: 0,
    idleTimeout: 120,
    sendPingsAutomatically: true,

    upgrade: (res, req, context) => {
      const offeredProtocols = req.getHeader("sec-websocket-protocol");
      const fromProtocols = socketCredentialsOf(offeredProtocols);
      const authorization = req.getHeader("authorization");
      const head = {
        userId: req.getHeader(USER_HEADER) || (fromProtocols.userId ?? ""),
        tenant: req.getHeader(TENANT_HEADER) || (fromProtocols.tenant ?? ""),
        authorization: authorization || (fromProtocols.token ? `Bearer ${fromProtocols.token}` : ""),
        key: req.getHeader("sec-websocket-key"),
        // A browser fails the handshake unless one offered subprotocol is answered back.
        protocol: offeredProtocols.split(",").some((p) => p.trim() === EVENT_SOCKET_PROTOCOL) ? EVENT_SOCKET_PROTOCOL : offeredProtocols,
        extensions: req.getHeader("sec-websocket-extensions"),
      };
      void req.getHeader(API_KEY_HEADER);
      const ex = new Exchange(res);
      void (async () => {
        if (deps.connections.full) throw new UnavailableError(capacityMessage(deps.connections.max));
        const auth = await deps.caller.authenticate(head.authorization);
        if (auth && !auth.ok) return ex.error(auth.denial.status, auth.denial.code, auth.denial.message, auth.denial.details, auth.denial.headers);
        const identity = await deps.caller.identify(head, auth);
        if (ex.finished) return;
        if (deps.connections.full) throw new UnavailableError(capacityMessage(deps.connections.max));
        ex.markStreaming();
        const state: SocketState = { identity, authorization: head.authorization, feeds: new Map(), closed: false };
        res.cork(() => res.upgrade(state, head.key, head.protocol, head.extensions, context));
      })().catch((err: unknown) => ex.fail(err));
    },

    open: (ws) => {
      const state = ws.getUserData();
      const connection: StreamConnection = {
        authorization: state.authorization,
        heartbeat: () => {},
        close(closing) {
          if (state.closed) return;
          end(ws);
          const status = closing.reason === "too_slow" ? 429 : 503;
          const last: EventSocketMessage = { type: "error", status, error: closing.reason, message: closing.message };
          ws.send(JSON.stringify(last));
          ws.end(CLOSE_CODES[closing.reason], closing.message.slice(0, 120));
        },
      };
      state.connection = connection;
      deps.connections.add(connection);
    },

    message: (ws, data) => {
      let request: ReturnType<typeof parseRequest>;
      try {
        request = parseRequest(data);
      } catch (err) {
        return send(ws, errorMessage(err));
      }
      if (!request.subscribe) {
        try {
          unsubscribe(ws, request.scope);
        } catch (err) {
          send(ws, errorMessage(err));
        }
        return;
      }
      const name = request.scope === "tenant" ? "tenant" : `cluster:${request.scope.clusterId}`;
      subscribe(ws, request.scope, request.since).catch((err: unknown) => send(ws, errorMessage(err, name)));
    },

    close: (ws) => end(ws),
  };

  /** Stops every feed of a socket and counts it out (once). */
  function end(ws: Socket) {
    const state = ws.getUserData();
    if (state.closed) return;
    state.closed = true;
    for (const feed of state.feeds.values()) feed.stop();
    state.feeds.clear();
    if (state.connection) deps.connections.remove(state.connection);
  }
}
