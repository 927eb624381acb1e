/**
 * The HTTP load generator of the gateway benchmarks: wrk, in its own process, on loopback. Installed with apt-get
 * when missing; a machine where that fails gets an error naming what to install.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { promisify } from "node:util";

export interface LoadOptions {
  /** Open connections, each with one request in flight. */
  connections: number;
  durationSeconds: number;
  /** wrk threads. @default 2 */
  threads?: number;
  /** A wrk Lua script (`-s`), e.g. one that sets the method and body. @default none: GET */
  script?: string;
}

export interface LoadResult {
  /** Answers received. */
  requests: number;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Answers with a status other than 2xx or 3xx. */
  non2xx: number;
  /** Connect, read, write errors and timeouts. */
  socketErrors: number;
}

/** The wrk binary, installed with apt-get when missing. */
export function ensureWrk(): string {
  const found = spawnSync("which", ["wrk"], { encoding: "utf8" }).stdout.trim();
  if (found) return found;
  try {
    execFileSync("apt-get", ["install", "-y", "wrk"], { stdio: "ignore" });
  } catch {
    throw new Error("the gateway benchmarks need wrk (https://github.com/wg/wrk): apt-get install wrk");
  }
  return "wrk";
}

/** wrk prints latencies as `850.00us`, `11.87ms`, `1.02s`. */
function milliseconds(text: string | undefined): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text ?? "");
  if (!m) return Number.NaN;
  const scale = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[m[2] as "us" | "ms" | "s" | "m"];
  return Math.round(Number(m[1]) * scale * 100) / 100;
}

/** A line of the "Latency Distribution" table (the thread stats also print percentages, `+/- Stdev`). */
const percentile = (out: string, p: number) => new RegExp(`^\\s+${p}%\\s+(\\S+)\\s*$`, "m").exec(out)?.[1];

/** Runs wrk against `url` (async: the caller may serve in process). */
export async function runWrk(wrk: string, url: string, headers: Record<string, string>, options: LoadOptions): Promise<LoadResult> {
  const args = [`-t${options.threads ?? 2}`, `-c${options.connections}`, `-d${options.durationSeconds}s`, "--latency"];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  if (options.script) args.push("-s", options.script);
  const { stdout: out } = await promisify(execFile)(wrk, [...args, url], { encoding: "utf8" });
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
    requestsPerSecond: Math.round(Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0)),
    latencyP50Ms: milliseconds(percentile(out, 50)),
    latencyP99Ms: milliseconds(percentile(out, 99)),
    non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
    socketErrors: errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  };
}
