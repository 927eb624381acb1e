import { MAX_LOG_CHARS } from "@corral/contracts";

/**
 * The tail of an output stream, kept bounded while it streams in: only the last `keepBytes` bytes stay in memory,
 * and `text()` says how many bytes were dropped before them, so a chatty action costs a fixed amount of memory
 * and its action history still shows how much was cut.
 */
export class OutputTail {
  private chunks: Buffer[] = [];
  private held = 0;
  private total = 0;

  constructor(private readonly keepBytes: number = 4 * MAX_LOG_CHARS) {}

  push(chunk: Buffer | string): void {
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    this.total += buf.length;
    this.chunks.push(buf);
    this.held += buf.length;
    if (this.held > 2 * this.keepBytes) this.compact();
  }

  /** Bytes seen in all. */
  get bytes(): number {
    return this.total;
  }

  /** The kept tail as text, prefixed with `[corral: N bytes dropped]` when anything was dropped. */
  text(limitBytes: number = MAX_LOG_CHARS - 48): string {
    this.compact();
    const all = Buffer.concat(this.chunks);
    const tail = all.length > limitBytes ? all.subarray(all.length - limitBytes) : all;
    const dropped = this.total - tail.length;
    // A cut may land inside a multi-byte character; drop the broken lead bytes rather than show U+FFFD.
    const text = tail.toString("utf8").replace(/^\uFFFD+/, "");
    return dropped > 0 ? `[corral: ${dropped} bytes dropped]\n${text}` : text;
  }

  private compact(): void {
    if (this.held <= this.keepBytes) return;
    const all = Buffer.concat(this.chunks);
    const kept = Buffer.from(all.subarray(all.length - this.keepBytes));
    this.chunks = [kept];
    this.held = kept.length;
  }
}
