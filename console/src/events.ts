/**
 * Live updates for pages, behind one interface: a page says what it watches and gets called when it changed.
 *
 * - One cluster: the gateway's Server-Sent Events (`GET /v2/clusters/{id}/events`), read with fetch because
 *   EventSource cannot send the identity headers; it resumes after the last event id when the stream drops.
 * - The cluster list: read again when the `/v2/events` WebSocket (credentials offered as subprotocols) says a
 *   cluster changed; the tenant admin follows the whole tenant, a user each of its clusters. Polled while the
 *   socket is down.
 */
import { ADMIN_USER, eventSocketProtocols, serverSentEvents, type ClusterStreamEvent, type ClusterSummary, type EventSocketMessage, type SocketCredentials } from "@corral/contracts";
import { API_BASE, type Api } from "./api.js";

export interface Feed {
  stop(): void;
}

/** How long a dropped stream or socket waits before it connects again. */
const RECONNECT_MS = 2000;
/** How often the cluster list is read again while the event socket is down. */
export const LIST_POLL_MS = 3000;
/** How often it is read again while events arrive (they say when a listed cluster changed; this finds new ones). */
const LIST_REFRESH_MS = 15_000;
/** Events arriving within this long are answered with one read of the list. */
const EVENT_BATCH_MS = 250;
/** The gateway's limit of subscriptions per socket (services/gateway/src/events/socket.ts). */
const MAX_SOCKET_SUBSCRIPTIONS = 100;

/** The sign-in's credentials, as the event socket takes them (a browser cannot set headers on a WebSocket). */
function socketCredentialsOfHeaders(headers: Record<string, string>): SocketCredentials {
  const token = headers["Authorization"]?.replace(/^Bearer /, "");
  return { userId: headers["Service-UserID"], tenant: headers["Service-TenantID"], ...(token ? { token } : {}) };
}

/**
 * Calls `changed` with the caller's clusters now and whenever the event socket says one of them changed (the
 * tenant's admin follows the whole tenant, a user each of its unfinished clusters); while the socket is down the
 * list is polled. Errors go to `failed`; reading goes on.
 */
export function watchClusterList(
  api: Api,
  status: readonly string[],
  changed: (clusters: ClusterSummary[]) => void,
  failed: (err: unknown) => void,
): Feed {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let socket: WebSocket | undefined;
  let socketOpen = false;
  const followed = new Set<string>();
  let lastSeen = "";
  const controller = new AbortController();
  const credentials = socketCredentialsOfHeaders(api.headers());
  const followsTenant = credentials.userId === ADMIN_USER;

  const follow = (clusters: ClusterSummary[]) => {
    if (!socket || !socketOpen || followsTenant) return;
    for (const c of clusters) {
      if (followed.size >= MAX_SOCKET_SUBSCRIPTIONS) break;
      if (c.status === "terminated" || followed.has(c.id)) continue;
      followed.add(c.id);
      socket.send(JSON.stringify({ type: "subscribe", clusterId: c.id }));
    }
  };
  const read = async () => {
    clearTimeout(timer);
    timer = undefined;
    try {
      const clusters = await api.call("clusters.list", { ...(status.length ? { query: { status: status.join(",") } } : {}), signal: controller.signal });
      if (stopped) return;
      // A list that did not change is not drawn again: rows (and the focus on them) stay as they are.
      const seen = JSON.stringify(clusters);
      if (seen !== lastSeen) {
        lastSeen = seen;
        changed(clusters);
      }
      follow(clusters);
    } catch (err) {
      if (!stopped) failed(err);
    }
    if (!stopped) timer ??= setTimeout(read, socketOpen ? LIST_REFRESH_MS : LIST_POLL_MS);
  };
  const readSoon = () => {
    clearTimeout(timer);
    timer = setTimeout(read, EVENT_BATCH_MS);
  };
  const connect = () => {
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${API_BASE}/events`;
    const ws = new WebSocket(url, eventSocketProtocols(credentials));
    socket = ws;
    ws.onopen = () => {
      socketOpen = true;
      followed.clear();
      if (followsTenant) ws.send(JSON.stringify({ type: "subscribe", tenant: true }));
      void read(); // what changed while the socket was down, and the clusters to follow
    };
    ws.onmessage = (message) => {
      const parsed = JSON.parse(String(message.data)) as EventSocketMessage;
      if (parsed.type === "event") readSoon();
    };
    ws.onclose = () => {
      socketOpen = false;
      if (stopped) return;
      readSoon();
      setTimeout(() => !stopped && connect(), RECONNECT_MS);
    };
  };
  void read();
  if (typeof WebSocket === "function") connect();
  return {
    stop() {
      stopped = true;
      controller.abort();
      clearTimeout(timer);
      socket?.close();
    },
  };
}

/** Calls `event` for each of the cluster's events (its history first, then live) until stopped. */
export function watchCluster(api: Api, clusterId: string, event: (e: ClusterStreamEvent) => void, failed: (err: unknown) => void): Feed {
  let stopped = false;
  let controller = new AbortController();
  let lastEventId: string | undefined;
  const connect = async () => {
    while (!stopped) {
      controller = new AbortController();
      try {
        const since = lastEventId ? `?since=${encodeURIComponent(lastEventId)}` : "";
        const res = await fetch(`${API_BASE}/clusters/${encodeURIComponent(clusterId)}/events${since}`, {
          headers: api.headers(),
          signal: controller.signal,
        });
        if (!res.ok || !res.body) throw new Error(`event stream: HTTP ${res.status} ${await res.text()}`);
        for await (const e of serverSentEvents(res.body)) {
          if (e.id !== undefined) lastEventId = e.id;
          if (e.event === "closing") continue;
          try {
            event(JSON.parse(e.data) as ClusterStreamEvent);
          } catch (err) {
            failed(err);
          }
        }
      } catch (err) {
        if (!stopped) failed(err);
      }
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
    }
  };
  void connect();
  return {
    stop() {
      stopped = true;
      controller.abort();
    },
  };
}
