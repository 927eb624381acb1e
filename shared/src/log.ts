/** Structured JSON-lines logging to stderr. */

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
  /** Where lines go. @default process.stderr */
  write?: (line: string) => void;
}

function errorFields(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}

/** Creates a logger writing one JSON object per line: `{time, level, msg, ...fields}`. */
export function createLogger(base: Record<string, unknown>, options: LoggerOptions = {}): Logger {
  const minRank = LEVEL_RANK[options.level ?? "info"];
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
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
