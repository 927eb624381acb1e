import type { HttpResponse } from "uWebSockets.js";
import { isCorralError, type CorralError } from "@corral/contracts";

const STATUS_TEXT: Record<number, string> = {
  200: "200 OK",
  400: "400 Bad Request",
  401: "401 Unauthorized",
  403: "403 Forbidden",
  404: "404 Not Found",
  405: "405 Method Not Allowed",
  409: "409 Conflict",
  413: "413 Payload Too Large",
  500: "500 Internal Server Error",
  501: "501 Not Implemented",
  503: "503 Service Unavailable",
  504: "504 Gateway Timeout",
};

const statusLine = (status: number) => STATUS_TEXT[status] ?? `${status} Error`;

/**
 * Resolves once uWS has parsed all of the read the current request came in (setImmediate runs after the event
 * loop's poll phase, where uWS parses). uWS closes a connection when it parses a request while an earlier one on
 * it is unanswered, so by then a request pipelined behind a waiting one has aborted it.
 */
const afterCurrentRead = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One HTTP exchange: remembers whether the client went away, and writes with backpressure. */
export class Exchange {
  aborted = false;
  private done = false;
  private paused = false;
  private clientCloses = false;
  private readonly abortListeners: Array<() => void> = [];

  /** `isHead`: the answer to a HEAD request carries the status and headers only, never a body. */
  constructor(
    private readonly res: HttpResponse,
    private readonly isHead = false,
  ) {
    res.onAborted(() => {
      this.aborted = true;
      for (const listener of this.abortListeners) listener();
    });
  }

  onAbort(listener: () => void): void {
    this.abortListeners.push(listener);
  }

  get finished(): boolean {
    return this.aborted || this.done;
  }

  /** The handler answers by streaming on the response itself (event streams): the exchange sends nothing more. */
  markStreaming(): void {
    this.done = true;
  }

  /**
   * True once uWS has parsed the rest of the read this request came in and the client still waits for the
   * answer. Awaited before carrying out a change: a request pipelined behind this one in the same write makes
   * uWS close the connection unanswered, and then neither is carried out.
   */
  async awaitedAfterCurrentRead(): Promise<boolean> {
    await afterCurrentRead();
    return !this.finished;
  }

  /**
   * The request asked to close the connection after its answer (`Connection: close`). uWS closes it then but does
   * not say so; the answer does (RFC 9112 9.6), or a keep-alive client may reuse a connection that is going away.
   */
  closeAfterAnswer(): void {
    this.clientCloses = true;
  }

  /**
   * Stops reading from the connection until this exchange is answered. uWS closes a connection when it reads a
   * request while an earlier one on it is unanswered; paused, a request pipelined behind this one (in a later read)
   * waits in the socket and is read, and answered, after this one. Called once the request body is read, before
   * the request goes to its service.
   */
  pauseReads(): void {
    if (this.finished || this.paused) return;
    this.paused = true;
    this.res.pause();
  }

  /**
   * Refuses the request with `err` and closes the connection, but only after uWS has parsed the rest of the
   * current read: answering at once would let uWS go on to serve the bytes behind this request (a smuggled
   * request); left unanswered until then, any request among them makes uWS close the connection instead.
   */
  refuseAfterCurrentRead(err: CorralError): void {
    void afterCurrentRead().then(() => this.error(err.status, err.code, err.message, err.details, { connection: "close" }));
  }

  /**
   * Sends a complete response; a slow reader gets the rest as it drains (onWritable). A `connection: close`
   * header closes the connection after the answer (uWS writes the header itself).
   */
  send(status: number, body: Buffer | undefined, headers: Record<string, string> = {}): void {
    if (this.finished) return;
    this.done = true;
    const res = this.res;
    const { connection, ...otherHeaders } = headers;
    const closeConnection = connection === "close";
    // resume() on a response that is not paused breaks it (uWS), so only after pauseReads.
    if (this.paused) res.resume();
    res.cork(() => {
      res.writeStatus(statusLine(status));
      for (const [k, v] of Object.entries(otherHeaders)) res.writeHeader(k, v);
      // uWS writes `Connection: close` itself only when it, not the client, decided to close.
      if (this.clientCloses) res.writeHeader("Connection", "close");
      // A body after a HEAD answer would be read by a keep-alive client as the start of the next response.
      if (!body || body.length === 0 || this.isHead) {
        res.end(undefined, closeConnection);
        return;
      }
      // uWS keeps what the socket cannot take yet; only answers that close the connection come here, all small.
      if (closeConnection) {
        res.end(body, true);
        return;
      }
      const total = body.byteLength;
      const startOffset = res.getWriteOffset();
      const [ok, finished] = res.tryEnd(body, total);
      if (!ok && !finished) {
        res.onWritable((offset) => {
          if (this.aborted) return true;
          const [ok2] = res.tryEnd(body.subarray(offset - startOffset), total);
          return ok2;
        });
      }
    });
  }

  json(status: number, value: unknown, headers: Record<string, string> = {}): void {
    const body = value === undefined ? undefined : Buffer.from(JSON.stringify(value));
    this.send(status, body, body ? { "content-type": "application/json", ...headers } : headers);
  }

  /** The JSON error body (docs/decisions.md, Errors are JSON): `{status, error, message, details?}`. */
  error(status: number, code: string, message: string, details?: Record<string, unknown>, headers?: Record<string, string>): void {
    const body: Record<string, unknown> = { status, error: code, message };
    if (details !== undefined) body["details"] = details;
    this.json(status, body, headers);
  }

  fail(err: CorralError | unknown): void {
    if (isCorralError(err)) {
      // The spec's missing-provider-fields body is `{missingFields: [...]}`, not the generic error shape.
      if (err.code === "missing_fields" && err.details) {
        this.json(err.status, err.details);
        return;
      }
      // Every 405 carries `Allow` (RFC 9110 15.5.6); a service says which methods in `details.allowed`.
      const allowed = err.status === 405 ? err.details?.["allowed"] : undefined;
      const headers = Array.isArray(allowed) ? { allow: allowed.filter((m) => typeof m === "string").join(", ") } : undefined;
      this.error(err.status, err.code, err.message, err.details, headers);
      return;
    }
    this.error(500, "internal", "internal error");
  }
}

export class BodyTooLargeError extends Error {
  /** The limit that was exceeded, in bytes. */
  constructor(readonly limit?: number) {
    super("request body too large");
  }
}

/** How much of a body past its limit is still read (and dropped) before the 413; see {@link BodyDrain}. */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
/** A client that sends nothing of its body for this long is not sending it: the 413 goes out. */
export const DRAIN_IDLE_MS = 250;

/**
 * The rest of a request body that is over its limit, read and dropped until it ends, {@link DRAIN_MAX_BYTES}
 * more arrived, or the client paused for {@link DRAIN_IDLE_MS} ({@link drained}). The 413 and the close
 * of the connection that follow find no unread bytes, so the kernel ends the connection with a FIN after the
 * answer; closing on unread bytes sends a reset instead, and a client still writing its body never reads the 413.
 */
export class BodyDrain {
  /** Settles once the body is drained; never when the client went away first ({@link cancel}). */
  readonly drained: Promise<void>;
  private dropped = 0;
  private done = false;
  private readonly idle: NodeJS.Timeout;
  private onDrained: () => void = () => {};

  constructor() {
    this.drained = new Promise((resolve) => (this.onDrained = resolve));
    this.idle = setTimeout(() => this.finish(), DRAIN_IDLE_MS);
  }

  /** Counts `bytes` of the body that were dropped; `isLast`: the body ended with them. */
  add(bytes: number, isLast: boolean): void {
    if (this.done) return;
    this.dropped += bytes;
    if (isLast || this.dropped > DRAIN_MAX_BYTES) return this.finish();
    this.idle.refresh();
  }

  /** The client went away: nothing more to wait for, nothing to answer. */
  cancel(): void {
    this.done = true;
    clearTimeout(this.idle);
  }

  private finish(): void {
    if (this.done) return;
    this.cancel();
    this.onDrained();
  }
}

/**
 * Reads and drops a request body declared (by `Content-Length`) over its limit, resolving once it is drained
 * ({@link BodyDrain}). uWS has answered `100 Continue` to a client that asked, so it is sending the body too.
 */
export function dropBody(res: HttpResponse, exchange: Exchange): Promise<void> {
  const drain = new BodyDrain();
  exchange.onAbort(() => drain.cancel());
  res.onData((ab, isLast) => drain.add(ab.byteLength, isLast));
  return drain.drained;
}

/**
 * Reads the request body up to `maxBytes`. Rejects with BodyTooLargeError past the limit, once the rest is drained
 * ({@link BodyDrain}), or when the client aborts. Chunks are copied: uWS detaches the ArrayBuffer after the callback.
 */
export function readBody(res: HttpResponse, exchange: Exchange, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let drain: BodyDrain | undefined;
    exchange.onAbort(() => {
      drain?.cancel();
      if (!settled) {
        settled = true;
        reject(new Error("aborted"));
      }
    });
    res.onData((ab, isLast) => {
      if (settled) return;
      if (drain) return drain.add(ab.byteLength, isLast);
      size += ab.byteLength;
      if (size > maxBytes) {
        chunks.length = 0;
        drain = new BodyDrain();
        void drain.drained.then(() => {
          settled = true;
          reject(new BodyTooLargeError(maxBytes));
        });
        drain.add(size - maxBytes, isLast);
        return;
      }
      chunks.push(Buffer.from(ab.slice(0)));
      if (isLast) {
        settled = true;
        resolve(Buffer.concat(chunks, size));
      }
    });
  });
}
