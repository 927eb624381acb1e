/** Structured JSON-lines logging to stderr. */
import { writeSync } from "node:fs";

export const LogLevel = { Debug: "debug", Info: "info", Warn: "warn", Error: "error" } as const;
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every line. */
  child(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  /** @default "info" */
  level?: LogLevel;
  /** Where lines go. @default stderr, see bufferedStderr */
  write?: (line: string) => void;
}

/** How long lines wait to be written together, and how many make a write at once. */
const FLUSH_INTERVAL_MS = 25;
const FLUSH_LINES = 512;

/** Lines kept while the reader does not read (a full pipe); past this, new lines are counted and dropped. */
const MAX_PENDING_LINES = 100_000;

/**
 * A writer of whole lines to stdout (1) or stderr (2) that writes at most every FLUSH_INTERVAL_MS (or every
 * FLUSH_LINES): a line per request (the request log) written each turn of the event loop was a system call and a
 * wake-up of the reader (journald, a terminal) per turn, which under load cost more CPU than the request. What is
 * pending when the process exits is written then; a SIGKILL loses at most the last interval's lines.
 *
 * The launcher's children share its stdout and stderr, so their lines must not cut into each other: each write is
 * at most PIPE_BUF bytes of whole lines, which a pipe takes in one piece or not at all. Writes go straight to the
 * descriptor (Node's stream would merge queued writes into one larger writev). A full pipe (EAGAIN: another process
 * on it made it non-blocking) keeps the lines for the next try.
 */
export function batchedLines(fd: 1 | 2): (line: string) => void {
  let pending: string[] = [];
  let dropped = 0;
  let flushScheduled = false;
  let flushesAtExit = false;
  const schedule = (ms: number) => {
    if (flushScheduled) return;
    flushScheduled = true;
    setTimeout(flush, ms).unref();
  };
  const writeAll = (atExit: boolean) => {
    if (dropped > 0) {
      pending.push(JSON.stringify({ time: new Date().toISOString(), level: "warn", msg: "log lines dropped: the output was not read", dropped }) + "\n");
      dropped = 0;
    }
    const chunks = atomicChunks(pending);
    pending = [];
    for (let i = 0; i < chunks.length; i++) {
      if (!writeWhole(fd, chunks[i]!, atExit)) {
        pending = chunks.slice(i);
        schedule(FLUSH_INTERVAL_MS);
        return;
      }
    }
  };
  function flush(): void {
    flushScheduled = false;
    writeAll(false);
  }
  return (line) => {
    if (pending.length >= MAX_PENDING_LINES) {
      dropped++;
      return;
    }
    pending.push(line);
    if (!flushesAtExit) {
      flushesAtExit = true;
      process.on("exit", () => writeAll(true));
    }
    if (pending.length >= FLUSH_LINES && !flushScheduled) return writeAll(false);
    schedule(FLUSH_INTERVAL_MS);
  };
}

const sleepBuffer = new Int32Array(new SharedArrayBuffer(4));
const sleepSync = (ms: number) => Atomics.wait(sleepBuffer, 0, 0, ms);

/**
 * Writes `text` whole. Answers false when the pipe is full before any byte went (try again later) unless `wait`
 * (at exit: wait up to 2 s for the reader); once part of it went, waits for the rest so the line stays in one piece.
 * A reader that is gone (EPIPE) or any other error drops the text: logging never takes the process down.
 */
function writeWhole(fd: number, text: string, wait: boolean): boolean {
  const bytes = Buffer.from(text);
  let offset = 0;
  const deadline = Date.now() + 2000;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN" || Date.now() > deadline) return true;
      if (offset === 0 && !wait) return false;
      sleepSync(1);
    }
  }
  return true;
}

/** What Linux writes to a pipe in one piece. */
const PIPE_BUF = 4096;

/** `lines` joined into as few strings as can be, each at most PIPE_BUF bytes unless a single line is longer. */
export function atomicChunks(lines: readonly string[]): string[] {
  const chunks: string[] = [];
  let current = "";
  let currentBytes = 0;
  for (const line of lines) {
    const bytes = Buffer.byteLength(line);
    if (currentBytes > 0 && currentBytes + bytes > PIPE_BUF) {
      chunks.push(current);
      current = "";
      currentBytes = 0;
    }
    current += line;
    currentBytes += bytes;
  }
  if (currentBytes > 0) chunks.push(current);
  return chunks;
}

/** The default writer of every logger of this process: one batch for all of them. */
let bufferedStderr: ((line: string) => void) | undefined;

let isoMs = 0;
let isoText = "";
/** `new Date().toISOString()`, formatted once per millisecond (a line per request asked for it thousands of times). */
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}

function errorFields(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}

/** Creates a logger writing one JSON object per line: `{time, level, msg, ...fields}`. */
export function createLogger(base: Record<string, unknown>, options: LoggerOptions = {}): Logger {
  return new JsonLinesLogger(base, LEVEL_RANK[options.level ?? "info"], options.write ?? (bufferedStderr ??= batchedLines(2)));
}

/**
 * Methods on the prototype, not closures per logger: a child logger is made per task and per request, and making
 * six closures each time was a visible part of a provisioner's CPU per task.
 */
class JsonLinesLogger implements Logger {
  constructor(
    private readonly base: Record<string, unknown>,
    private readonly minRank: number,
    private readonly write: (line: string) => void,
  ) {}

  debug(msg: string, fields?: Record<string, unknown>): void {
    this.emit("debug", msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    this.emit("info", msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.emit("warn", msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    this.emit("error", msg, fields);
  }
  child(fields: Record<string, unknown>): Logger {
    return new JsonLinesLogger({ ...this.base, ...fields }, this.minRank, this.write);
  }

  private emit(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
    if (LEVEL_RANK[level] < this.minRank) return;
    const record: Record<string, unknown> = { time: isoNow(), level, ...this.base, msg };
    if (fields) for (const k in fields) record[k] = errorFields(fields[k]);
    this.write(JSON.stringify(record) + "\n");
  }
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger({}, { write: () => {} });
