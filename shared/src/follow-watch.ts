import { backoffMs, sleep } from "./retry.js";

/** An open watch: what it yields, and how to end it. */
export interface OpenWatch<T> {
  items: AsyncIterable<T>;
  stop(): void;
}

export interface FollowWatchOptions<T> {
  /** Opens the watch, at the start and again after it failed or ended. */
  open(): Promise<OpenWatch<T>>;
  /** Handles one item; the next is taken when it settles. */
  onItem(item: T): unknown;
  /** Told that the watch failed; it is opened again. */
  onError(err: unknown): void;
  /**
   * Told that the watch failed or ended, before it is opened again: drop what `open` keeps (a reader whose bucket
   * may have been deleted and created again) here.
   */
  onEnd?(): void;
  /** Stops following, the open watch included. */
  signal: AbortSignal;
  /** The backoff between openings, from `baseMs` doubling to `maxMs`; an item received starts it over. @default 250, 5000 */
  backoff?: { baseMs: number; maxMs: number };
}

/**
 * Follows a watch that can fail or end (a NATS restart, a bucket deleted and created again): every item goes to
 * `onItem`, and a watch that ends is opened again after a backoff, until `signal` aborts. Resolves once stopped.
 */
export async function followWatch<T>(options: FollowWatchOptions<T>): Promise<void> {
  const { signal } = options;
  const { baseMs, maxMs } = options.backoff ?? { baseMs: 250, maxMs: 5_000 };
  let current: OpenWatch<T> | undefined;
  const stopCurrent = () => current?.stop();
  signal.addEventListener("abort", stopCurrent, { once: true });
  try {
    let failures = 0;
    while (!signal.aborted) {
      try {
        current = await options.open();
        if (signal.aborted) current.stop();
        for await (const item of current.items) {
          failures = 0;
          await options.onItem(item);
        }
      } catch (err) {
        options.onError(err);
      }
      current = undefined;
      if (signal.aborted) break;
      options.onEnd?.();
      await sleep(backoffMs(++failures, baseMs, maxMs), signal);
    }
  } finally {
    signal.removeEventListener("abort", stopCurrent);
  }
}
