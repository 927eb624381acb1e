/**
 * Shares a read among concurrent callers that each need a result read after the message they are handling came
 * in (a read barrier, such as "does the bucket hold anything this mirror has not applied?"). A caller may join a
 * read started in the same turn of the event loop: no I/O callback runs within a turn, so that read's request
 * leaves after every message this process has received. A read started in an earlier turn may have been
 * answered before the caller's message came in: the caller joins the next read instead, started once the current
 * one settles. So at most one read is in flight and one waits, however many callers there are.
 */
export function freshReads<T>(read: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  /** The read in flight while it was started in the current turn. */
  let joinable: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const start = (): Promise<T> => {
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
  return () => {
    if (joinable) return joinable;
    if (next) return next; // not started yet: it will be read after this caller's message came in
    if (!inFlight) return start();
    next = inFlight.then(settled, settled).then(() => {
      next = undefined;
      return start();
    });
    return next;
  };
}
