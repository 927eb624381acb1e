export interface RetryForOptions {
  /** How long failures are tried again, from the first call. */
  forMs: number;
  /** Wait between attempts. */
  delayMs: number;
  /** Whether an error may be tried again; any other is thrown at once. @default every error */
  retryable?: (err: unknown) => boolean;
  /** Told of each error that is tried again. */
  onRetry?: (err: unknown) => void;
}

/**
 * Calls `fn` until it succeeds, trying again after `delayMs` while it fails with a retryable error, for at most
 * `forMs`; then the last error is thrown. For what settles by itself shortly after start (a NATS cluster still
 * placing its streams, a stream just created elsewhere).
 */
export async function retryFor<T>(fn: () => Promise<T>, options: RetryForOptions): Promise<T> {
  const deadline = Date.now() + options.forMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!(options.retryable?.(err) ?? true) || Date.now() >= deadline) throw err;
      options.onRetry?.(err);
      await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    }
  }
}
