/**
 * Clients of the gateway's live event streams for tests and benchmarks: an SSE reader over node:http and a
 * WebSocket client (the `ws` package, which uWebSockets.js itself depends on), both recording what arrives.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import { eventSocketProtocols, type ClusterStreamEvent, type EventSocketMessage } from "@corral/contracts";
import type { Caller } from "./api.js";
import { eventually } from "./eventually.js";

/** One SSE message as received: `id`, `event` and the parsed `data`. */
export interface SseMessage {
  id: number | undefined;
  event: string;
  data: unknown;
}

export interface SseClient {
  /** The response status and, for anything but 200, the parsed JSON body. */
  status: number;
  body: unknown;
  /** Everything received so far, in order (heartbeat comments not included). */
  messages: SseMessage[];
  /**
   * The cluster events (every message but `closing`), each with the id of the stored event it came in: a frame
   * without an id (a task end a `plan.progress` carries) takes the id of the frame that ends its group (-1 while
   * that has not arrived).
   */
  events(): Array<{ id: number; event: ClusterStreamEvent }>;
  /** The last `id:` received, as a browser's EventSource keeps it for `Last-Event-ID`. */
  readonly lastEventId: number | undefined;
  /** Comment lines received (heartbeats). */
  comments: number;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  /** Waits until `predicate` holds over the messages. */
  waitFor(predicate: (messages: SseMessage[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Stops reading (the socket stays open, as a client that does not keep up). */
  pause(): void;
  resume(): void;
  close(): void;
}

export interface SseOptions {
  lastEventId?: number;
  headers?: Record<string, string>;
  /** Called with each message as it arrives. */
  onMessage?: (message: SseMessage) => void;
  /** Keep the messages in `messages`. @default true (benchmarks with many clients turn it off) */
  keep?: boolean;
}

const callerHeaders = (caller: Caller): Record<string, string> => ({
  ...(caller.user !== undefined ? { "Service-UserID": caller.user } : {}),
  ...(caller.tenant !== undefined ? { "Service-TenantID": caller.tenant } : {}),
});

/** Opens `GET <baseUrl>/clusters/<id>/events`; resolves once the status line is in. */
export function openSse(baseUrl: string, caller: Caller, clusterId: string, options: SseOptions = {}): Promise<SseClient> {
  const url = new URL(`${baseUrl}/clusters/${encodeURIComponent(clusterId)}/events`);
  const headers: Record<string, string> = { accept: "text/event-stream", ...callerHeaders(caller), ...options.headers };
  if (options.lastEventId !== undefined) headers["last-event-id"] = String(options.lastEventId);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res: IncomingMessage) => {
      const messages: SseMessage[] = [];
      let comments = 0;
      let buffer = "";
      let endedResolve!: () => void;
      const ended = new Promise<void>((r) => (endedResolve = r));
      res.setEncoding("utf8");
      const client: SseClient = {
        status: res.statusCode ?? 0,
        body: undefined,
        messages,
        events: () => {
          const events = messages.filter((m) => m.event !== "closing");
          const ids: number[] = [];
          let groupId = -1;
          for (let i = events.length - 1; i >= 0; i--) ids[i] = groupId = events[i]?.id ?? groupId;
          return events.map((m, i) => ({ id: ids[i] ?? -1, event: m.data as ClusterStreamEvent }));
        },
        get lastEventId() {
          for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.id !== undefined) return messages[i]?.id;
          return undefined;
        },
        get comments() {
          return comments;
        },
        ended,
        waitFor: (predicate, what, timeoutMs = 30_000) =>
          eventually(() => predicate(messages), { what, timeoutMs, intervalMs: 20 }).then(() => undefined),
        pause: () => res.pause(),
        resume: () => res.resume(),
        close: () => req.destroy(),
      };
      if (client.status !== 200) {
        let text = "";
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          client.body = text ? JSON.parse(text) : undefined;
          endedResolve();
          resolve(client);
        });
        return;
      }
      res.on("data", (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const message: SseMessage = { id: undefined, event: "message", data: undefined };
          let isMessage = false;
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) comments++;
            else if (line.startsWith("id: ")) message.id = Number(line.slice(4));
            else if (line.startsWith("event: ")) message.event = line.slice(7);
            else if (line.startsWith("data: ")) {
              message.data = JSON.parse(line.slice(6));
              isMessage = true;
            }
          }
          if (!isMessage) continue;
          options.onMessage?.(message);
          if (options.keep ?? true) messages.push(message);
        }
      });
      res.on("end", endedResolve);
      res.on("close", endedResolve);
      res.on("error", endedResolve);
      resolve(client);
    });
    req.on("error", reject);
    req.end();
  });
}

/** The part of the `ws` package's client used here. */
interface WsLike {
  on(event: "open", listener: () => void): void;
  on(event: "message", listener: (data: Buffer) => void): void;
  on(event: "close", listener: (code: number, reason: Buffer) => void): void;
  on(event: "error", listener: (err: Error) => void): void;
  on(event: "unexpected-response", listener: (req: unknown, res: IncomingMessage) => void): void;
  /** The subprotocol the server answered. */
  readonly protocol: string;
  send(data: string): void;
  close(): void;
  terminate(): void;
  pause(): void;
  resume(): void;
}
type WsConstructor = new (url: string, protocols: string[], options: { headers: Record<string, string> }) => WsLike;
const WebSocketClient = createRequire(import.meta.url)("ws") as WsConstructor;

export interface SocketClient {
  messages: EventSocketMessage[];
  /** The subprotocol the server answered ("" for none). */
  protocol: string;
  send(message: unknown): void;
  /** Sends raw text. */
  sendRaw(text: string): void;
  waitFor(predicate: (messages: EventSocketMessage[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** The close code and reason, once closed. */
  closed: Promise<{ code: number; reason: string }>;
  pause(): void;
  resume(): void;
  close(): void;
}

/** A refused upgrade: the HTTP status and JSON body. */
export interface RefusedSocket {
  refused: true;
  status: number;
  body: unknown;
}

export interface SocketOptions {
  headers?: Record<string, string>;
  /**
   * Send the identity (and `token`) as offered subprotocols instead of headers, as a browser must.
   * @default false
   */
  asSubprotocols?: { token?: string };
  /** Called with each message as it arrives. */
  onMessage?: (message: EventSocketMessage) => void;
  /** Keep the messages in `messages`. @default true */
  keep?: boolean;
}

/** Opens the event WebSocket at `<baseUrl>/events`. */
export function openEventSocket(baseUrl: string, caller: Caller, options: SocketOptions = {}): Promise<SocketClient | RefusedSocket> {
  const url = `${baseUrl.replace(/^http/, "ws")}/events`;
  const protocols = options.asSubprotocols
    ? eventSocketProtocols({ userId: caller.user, tenant: caller.tenant, token: options.asSubprotocols.token })
    : [];
  const headers = options.asSubprotocols ? { ...options.headers } : { ...callerHeaders(caller), ...options.headers };
  const ws = new WebSocketClient(url, protocols, { headers });
  const messages: EventSocketMessage[] = [];
  let closedResolve!: (c: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((r) => (closedResolve = r));
  ws.on("message", (data) => {
    const message = JSON.parse(data.toString("utf8")) as EventSocketMessage;
    options.onMessage?.(message);
    if (options.keep ?? true) messages.push(message);
  });
  ws.on("close", (code, reason) => closedResolve({ code, reason: reason.toString("utf8") }));
  return new Promise((resolve, reject) => {
    ws.on("unexpected-response", (_req, res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        ws.terminate();
        resolve({ refused: true, status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
      });
    });
    ws.on("error", reject);
    ws.on("open", () =>
      resolve({
        messages,
        protocol: ws.protocol,
        send: (message) => ws.send(JSON.stringify(message)),
        sendRaw: (text) => ws.send(text),
        waitFor: (predicate, what, timeoutMs = 30_000) =>
          eventually(() => predicate(messages), { what, timeoutMs, intervalMs: 20 }).then(() => undefined),
        closed,
        pause: () => ws.pause(),
        resume: () => ws.resume(),
        close: () => ws.close(),
      }),
    );
  });
}

/** Narrows an open attempt to an open socket; throws with the refusal otherwise. */
export function opened(socket: SocketClient | RefusedSocket): SocketClient {
  if ("refused" in socket) throw new Error(`the event socket was refused: HTTP ${socket.status} ${JSON.stringify(socket.body)}`);
  return socket;
}
