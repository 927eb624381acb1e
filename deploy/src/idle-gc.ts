/**
 * A full garbage collection once a process has gone idle with a grown young generation: after its start and after
 * each busy spell. V8 grows the young generation under allocation (up to twice `--max-semi-space-size`, servers.ts)
 * and gives it back only in a full collection, which an idle service never runs: its memory reducer starts after a
 * full collection, and a heap this small needs none. One collection when the work stops takes back about 30 MB per
 * process (bench/system/memory.ts) and costs some milliseconds while nothing else runs. Every compiled Corral process runs it
 * (`--expose-gc --import=./deploy/dist/preload-idle-gc.js`, compiled.ts; the launcher calls it itself).
 */
import { performance, type EventLoopUtilization } from "node:perf_hooks";
import { getHeapSpaceStatistics } from "node:v8";

/** How often the event loop's load is looked at. */
export const IDLE_CHECK_MS = 10_000;
/** Below this share of a check interval spent running JavaScript, the process is idle (CPU contention inflates it). */
export const IDLE_UTILIZATION = 0.05;
/** A young generation larger than this has grown since the last full collection (one leaves it at about 1 MB). */
export const GROWN_YOUNG_GENERATION_BYTES = 4 * 1024 * 1024;

/** Options for {@link collectWhenIdle}; the defaults are the process's own. */
export interface IdleGcOptions {
  /** @default `globalThis.gc` (node --expose-gc); without it nothing is done */
  gc?: () => void;
  /** The event loop's utilization since the last call. @default performance.eventLoopUtilization */
  utilization?: () => number;
  /** Bytes the young generation holds now. @default v8's new_space size */
  youngGenerationBytes?: () => number;
  /** Calls `check` every `ms`; answers how to stop. @default an unref'd setInterval */
  every?: (ms: number, check: () => void) => () => void;
}

/** Starts collecting when idle; answers how to stop. A no-op without a `gc` (node run without --expose-gc). */
export function collectWhenIdle(options: IdleGcOptions = {}): () => void {
  const gc = options.gc ?? (globalThis as { gc?: () => void }).gc;
  if (!gc) return () => {};
  const utilization = options.utilization ?? utilizationSinceLastCall();
  const youngGenerationBytes = options.youngGenerationBytes ?? newSpaceBytes;
  const every = options.every ?? unrefInterval;
  // Only a grown young generation is worth a collection, so an idle process collects once and then no more.
  return every(IDLE_CHECK_MS, () => {
    if (utilization() < IDLE_UTILIZATION && youngGenerationBytes() > GROWN_YOUNG_GENERATION_BYTES) gc();
  });
}

function utilizationSinceLastCall(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, last);
    last = now;
    return delta.utilization;
  };
}

function newSpaceBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0;
}

function unrefInterval(ms: number, check: () => void): () => void {
  const timer = setInterval(check, ms);
  timer.unref();
  return () => clearInterval(timer);
}
