/**
 * `fn` run once and its result kept for every later call; a failure is not kept, so the next call tries again
 * (a bucket that could not be opened while NATS was restarting is opened on the next use).
 */
export function retryingOnce<T>(fn: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= fn().catch((err: unknown) => {
      pending = undefined;
      throw err;
    }));
}
