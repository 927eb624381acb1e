import type { HttpResponse } from "uWebSockets.js";

/**
 * Writes a Server-Sent Events response as events come, never holding more than `maxBufferedBytes` for a client
 * that does not read: what the socket does not take waits here (uWS keeps only the one write it could not finish)
 * and past the limit `overflow` is called instead of holding more.
 */
export class SseWriter {
  private readonly queue: string[] = [];
  private queuedBytes = 0;
  private blocked = false;
  private ended = false;

  constructor(
    private readonly res: HttpResponse,
    private readonly maxBufferedBytes: number,
    private readonly overflow: () => void,
  ) {}

  get isEnded(): boolean {
    return this.ended;
  }

  /** Status, headers and a first comment, so the client sees the stream open at once. */
  open(): void {
    this.res.cork(() => {
      this.res
        .writeStatus("200 OK")
        .writeHeader("content-type", "text/event-stream; charset=utf-8")
        .writeHeader("cache-control", "no-cache")
        .writeHeader("x-accel-buffering", "no");
      this.writeNow(": corral event stream\nretry: 2000\n\n");
    });
  }

  write(chunk: string): void {
    if (this.ended) return;
    if (this.blocked) {
      this.queue.push(chunk);
      this.queuedBytes += Buffer.byteLength(chunk);
      if (this.queuedBytes > this.maxBufferedBytes) this.overflow();
      return;
    }
    this.res.cork(() => this.writeNow(chunk));
  }

  /** Writes a last chunk and ends the response (uWS sends what it holds, then closes an unread socket on its timeout). */
  end(lastChunk?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.res.cork(() => {
      if (lastChunk) this.res.write(lastChunk);
      this.res.end(undefined, true);
    });
  }

  /** The client went away: nothing more is written. */
  aborted(): void {
    this.ended = true;
    this.queue.length = 0;
  }

  private writeNow(chunk: string): void {
    if (this.res.write(chunk)) return;
    this.blocked = true;
    this.res.onWritable(() => this.drain());
  }

  private drain(): boolean {
    if (this.ended) return true;
    while (this.queue.length > 0) {
      const chunk = this.queue.shift()!;
      this.queuedBytes -= Buffer.byteLength(chunk);
      if (!this.res.write(chunk)) return true;
    }
    this.blocked = false;
    return true;
  }
}
