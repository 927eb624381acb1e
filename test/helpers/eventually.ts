import { setTimeout as sleep } from "node:timers/promises";

/** Options for {@link eventually}. */
export interface EventuallyOptions {
  /** What is awaited, for the timeout message ("cluster 17 is active"). */
  what: string;
  /** Give up after this long. @default 5_000 ms */
  timeoutMs?: number;
  /** Pause between attempts. @default 50 ms */
  intervalMs?: number;
}

/**
 * Polls a named condition instead of sleeping and asserting: calls `fn` until it returns
 * something other than `false` without throwing, and returns that value. On timeout it throws an
 * error naming `what` and the last failure.
 */
export async function eventually<T>(fn: () => T | Promise<T>, opts: EventuallyOptions): Promise<Exclude<T, false>> {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const intervalMs = opts.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let lastFailure = "condition was false";
  for (;;) {
    try {
      const value = await fn();
      if (value !== false) {
        return value as Exclude<T, false>;
      }
      lastFailure = "condition was false";
    } catch (err) {
      lastFailure = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() + intervalMs > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what}: ${lastFailure}`);
    }
    await sleep(intervalMs);
  }
}
