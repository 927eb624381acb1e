/**
 * Live updates for pages, behind one interface: a page says what it watches and gets called when it changed.
 *
 * - One cluster: the gateway's Server-Sent Events (`GET /v2/clusters/{id}/events`), read with fetch because
 *   EventSource cannot send the identity headers; it resumes after the last event id when the stream drops.
 * - The cluster list: polled (`GET /v2/clusters`) every few seconds. A browser cannot send identity headers on
 *   a WebSocket either, and the tenant-wide subscription of `/v2/events` is for the tenant admin only.
 */
import type { ClusterStreamEvent, ClusterSummary } from "@corral/contracts";
import { API_BASE, type Api } from "./api.js";

export interface Feed {
  stop(): void;
}

/** How often the cluster list is read again. */
export const LIST_POLL_MS = 3000;

/** Calls `changed` with the caller's clusters now and after every poll; errors go to `failed`, polling goes on. */
export function watchClusterList(
  api: Api,
  status: readonly string[],
  changed: (clusters: ClusterSummary[]) => void,
  failed: (err: unknown) => void,
): Feed {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const controller = new AbortController();
  const poll = async () => {
    try {
      const clusters = await api.call("clusters.list", { ...(status.length ? { query: { status: status.join(",") } } : {}), signal: controller.signal });
      if (!stopped) changed(clusters);
    } catch (err) {
      if (!stopped) failed(err);
    }
    if (!stopped) timer = setTimeout(poll, LIST_POLL_MS);
  };
  void poll();
  return {
    stop() {
      stopped = true;
      controller.abort();
      clearTimeout(timer);
    },
  };
}

/** Splits a Server-Sent Events body into events (`id`, `event`, `data` lines; blank line ends one). */
export class SseParser {
  private buffer = "";
  lastEventId = "";

  constructor(private readonly onEvent: (type: string, data: string) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf("\n\n")) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let type = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id") this.lastEventId = value;
        else if (field === "event") type = value;
        else if (field === "data") data.push(value);
      }
      if (data.length > 0) this.onEvent(type, data.join("\n"));
    }
  }
}

const RECONNECT_MS = 2000;

/** Calls `event` for each of the cluster's events (its history first, then live) until stopped. */
export function watchCluster(api: Api, clusterId: string, event: (e: ClusterStreamEvent) => void, failed: (err: unknown) => void): Feed {
  let stopped = false;
  let controller = new AbortController();
  const parser = new SseParser((type, data) => {
    if (type === "closing") return;
    try {
      event(JSON.parse(data) as ClusterStreamEvent);
    } catch (err) {
      failed(err);
    }
  });
  const connect = async () => {
    while (!stopped) {
      controller = new AbortController();
      try {
        const since = parser.lastEventId ? `?since=${encodeURIComponent(parser.lastEventId)}` : "";
        const res = await fetch(`${API_BASE}/clusters/${encodeURIComponent(clusterId)}/events${since}`, {
          headers: api.headers(),
          signal: controller.signal,
        });
        if (!res.ok || !res.body) throw new Error(`event stream: HTTP ${res.status} ${await res.text()}`);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.push(value);
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
