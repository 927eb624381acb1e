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

/**
 * A writer of whole lines to stdout (1) or stderr (2) that writes at most every FLUSH_INTERVAL_MS (or every
 * FLUSH_LINES): a line per request (the request log) written each turn of the event loop was a system call and a
 * wake-up of the reader (the launcher, journald) per turn, which under load cost more CPU than the request. What is
 * pending when the process exits is written then; a SIGKILL loses at most the last interval's lines.
 */
export function batchedLines(fd: 1 | 2): (line: string) => void {
  const stream = fd === 1 ? process.stdout : process.stderr;
  let pending: string[] = [];
  let flushScheduled = false;
  let flushesAtExit = false;
  const flush = () => {
    flushScheduled = false;
    if (pending.length === 0) return;
    const text = pending.join("");
    pending = [];
    stream.write(text);
  };
  const flushAtExit = () => {
    if (pending.length > 0) writeSync(fd, pending.join(""));
    pending = [];
  };
  return (line) => {
    pending.push(line);
    if (pending.length >= FLUSH_LINES) return flush();
    if (flushScheduled) return;
    if (!flushesAtExit) {
      flushesAtExit = true;
      process.on("exit", flushAtExit);
    }
    flushScheduled = true;
    setTimeout(flush, FLUSH_INTERVAL_MS).unref();
  };
}

/** The default writer of every logger of this process: one batch for all of them. */
let bufferedStderr: ((line: string) => void) | undefined;

function errorFields(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}

/** Creates a logger writing one JSON object per line: `{time, level, msg, ...fields}`. */
export function createLogger(base: Record<string, unknown>, options: LoggerOptions = {}): Logger {
  const minRank = LEVEL_RANK[options.level ?? "info"];
  const write = options.write ?? (bufferedStderr ??= batchedLines(2));
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (LEVEL_RANK[level] < minRank) return;
    const record: Record<string, unknown> = { time: new Date().toISOString(), level, ...base, msg };
    if (fields) for (const [k, v] of Object.entries(fields)) record[k] = errorFields(v);
    write(JSON.stringify(record) + "\n");
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger({ ...base, ...fields }, options),
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger({}, { write: () => {} });
