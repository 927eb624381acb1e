import { sleep } from "@corral/shared";

/** Items taken per batch at most. */
export const BATCH = 256;
/**
 * After an idle wait, the first item waits this long for its siblings: a stage's results arrive within a few
 * milliseconds of each other, and applied together they cost their plan one write (and one progress event)
 * instead of one each.
 */
export const LINGER_MS = 5;
/**
 * Batches handled at once: while one waits for its writes to be stored (an fsync each with `sync_interval:
 * always`), the next is applied. Two batches holding one plan's results are merged by compare-and-set.
 */
export const BATCHES_IN_FLIGHT = 2;

/** Items waiting to be handled, taken in batches by {@link runBatches}. */
export interface BatchQueue<T> {
  push(item: T): void;
}

export interface BatchRunner<T> {
  queue: BatchQueue<T>;
  /** Stops taking batches; resolves once the batches in flight are handled. */
  stop(): Promise<void>;
}

/**
 * Hands what is queued to `handle` in batches of up to {@link BATCH}: whatever has arrived while the last batch
 * ran, at most {@link BATCHES_IN_FLIGHT} at once. `handle` must not throw (it settles its batch itself).
 */
export function runBatches<T>(handle: (batch: T[]) => Promise<void>): BatchRunner<T> {
  const queued: T[] = [];
  let running = true;
  let wake: (() => void) | undefined;
  const inFlight = new Set<Promise<void>>();

  const loop = (async () => {
    let idle = false;
    while (running) {
      if (queued.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 500);
        });
        wake = undefined;
        idle = true;
        continue;
      }
      if (idle && queued.length < BATCH) await sleep(LINGER_MS);
      idle = false;
      const handled = handle(queued.splice(0, BATCH));
      inFlight.add(handled);
      void handled.finally(() => {
        inFlight.delete(handled);
        wake?.();
      });
      while (inFlight.size >= BATCHES_IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  })();

  return {
    queue: {
      push(item) {
        queued.push(item);
        wake?.();
      },
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
    },
  };
}
