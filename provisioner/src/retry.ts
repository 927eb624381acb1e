/** Waits `ms`, or less when `signal` aborts. Resolves false when aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Exponential backoff with full jitter: attempt 1 -> up to `baseMs`, doubling to `maxMs`. */
export function backoffMs(attempt: number, baseMs = 100, maxMs = 5_000): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return cap / 2 + (Math.random() * cap) / 2;
}

/**
 * Calls `fn` until it succeeds or `signal` aborts, backing off between attempts and logging each failure through
 * `onError`. Returns `{ ok: false }` only when aborted.
 */
export async function retryUntil<T>(
  fn: () => Promise<T>,
  signal: AbortSignal,
  onError: (err: unknown, attempt: number) => void,
): Promise<{ ok: true; value: T } | { ok: false }> {
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) return { ok: false };
    try {
      return { ok: true, value: await fn() };
    } catch (err) {
      onError(err, attempt);
      if (!(await sleep(backoffMs(attempt), signal))) return { ok: false };
    }
  }
}
