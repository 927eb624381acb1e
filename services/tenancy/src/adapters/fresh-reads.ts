import { sleep } from "@corral/shared";

export interface FreshReadsOptions {
  /**
   * Least time between the starts of two reads: callers that come sooner wait for the next read, so under load
   * the reads cost at most this often, for at most this much more latency. @default 0
   */
  minIntervalMs?: number;
}

/**
 * Shares a read among concurrent callers that each need a result read after the message they are handling came
 * in (a read barrier, such as "does the bucket hold anything this mirror has not applied?"). A caller may join a
 * read started in the same turn of the event loop: no I/O callback runs within a turn, so that read's request
 * leaves after every message this process has received. A read started in an earlier turn may have been
 * answered before the caller's message came in: the caller joins the next read instead, started once the current
 * one settles (and `minIntervalMs` after the current one started). So at most one read is in flight and one
 * waits, however many callers there are.
 */
export function freshReads<T>(read: () => Promise<T>, options: FreshReadsOptions = {}): () => Promise<T> {
  const minIntervalMs = options.minIntervalMs ?? 0;
  let inFlight: Promise<T> | undefined;
  /** The read in flight while it was started in the current turn. */
  let joinable: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  let lastStartedAt = -Infinity;
  const start = (): Promise<T> => {
    lastStartedAt = performance.now();
    const current = read().finally(() => {
      if (inFlight === current) inFlight = undefined;
    });
    inFlight = joinable = current;
    // Microtasks run before the next I/O callback of the event loop, at the end of this turn.
    queueMicrotask(() => {
      if (joinable === current) joinable = undefined;
    });
    return current;
  };
  const settled = () => undefined;
  /** Undefined once `minIntervalMs` have passed since the last start; else settles then (timers may fire early). */
  const intervalOver = (): Promise<void> | undefined => {
    const waitMs = lastStartedAt + minIntervalMs - performance.now();
    return waitMs > 0 ? sleep(Math.ceil(waitMs)).then(intervalOver) : undefined;
  };
  return () => {
    if (joinable) return joinable;
    if (next) return next; // not started yet: it will be read after this caller's message came in
    const waiting = intervalOver();
    if (!inFlight && !waiting) return start();
    next = Promise.all([inFlight?.then(settled, settled), waiting]).then(() => {
      next = undefined;
      return start();
    });
    return next;
  };
}
