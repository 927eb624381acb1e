/** Waits `ms`, or less when `signal` aborts. Resolves true when the whole time passed, false when aborted. */
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

/** Exponential backoff with jitter: attempt 1 -> between `baseMs` / 2 and `baseMs`, doubling up to `maxMs`. */
export function backoffMs(attempt: number, baseMs = 100, maxMs = 5_000): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return cap / 2 + (Math.random() * cap) / 2;
}

export interface RetryOptions {
  /** Pause after the `attempt`-th failure (1 for the first), ms. @default backoffMs(attempt) */
  pauseMs?: (attempt: number) => number;
  /** Whether an error may be tried again; any other is thrown at once. @default every error */
  retryable?: (err: unknown) => boolean;
  /** Told of each failure that is tried again. */
  onRetry?: (err: unknown, attempt: number) => void;
}

type Attempted<T> = { ok: true; value: T } | { ok: false; lastError: unknown };

/** The one retry loop: `fn` until it succeeds, a non-retryable error is thrown, or `signal` aborts. */
async function attempt<T>(fn: () => Promise<T>, signal: AbortSignal, options: RetryOptions): Promise<Attempted<T>> {
  let lastError: unknown = signal.reason;
  for (let n = 1; !signal.aborted; n++) {
    try {
      return { ok: true, value: await fn() };
    } catch (err) {
      lastError = err;
      if (!(options.retryable?.(err) ?? true)) throw err;
      if (signal.aborted) break;
      options.onRetry?.(err, n);
      if (!(await sleep(options.pauseMs?.(n) ?? backoffMs(n), signal))) break;
    }
  }
  return { ok: false, lastError };
}

/**
 * Calls `fn` until it succeeds or `signal` aborts, backing off between attempts and telling `onError` of each
 * failure tried again. Answers `{ ok: false }` only when aborted.
 */
export async function retryUntil<T>(
  fn: () => Promise<T>,
  signal: AbortSignal,
  onError: (err: unknown, attempt: number) => void,
): Promise<{ ok: true; value: T } | { ok: false }> {
  const done = await attempt(fn, signal, { onRetry: onError });
  return done.ok ? done : { ok: false };
}

export interface RetryForOptions extends Omit<RetryOptions, "pauseMs"> {
  /** How long failures are tried again, from the first call. */
  forMs: number;
  /** Wait between attempts. @default backoff from 100 ms to 5 s */
  delayMs?: number;
}

/**
 * Calls `fn` until it succeeds, trying again while it fails with a retryable error, for at most `forMs`; then the
 * last error is thrown. For what settles by itself shortly after start (a NATS cluster still placing its streams,
 * a stream just created elsewhere).
 */
export async function retryFor<T>(fn: () => Promise<T>, options: RetryForOptions): Promise<T> {
  const { forMs, delayMs, ...rest } = options;
  const done = await attempt(fn, AbortSignal.timeout(forMs), { ...rest, ...(delayMs !== undefined ? { pauseMs: () => delayMs } : {}) });
  if (done.ok) return done.value;
  throw done.lastError;
}
