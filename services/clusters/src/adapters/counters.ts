import { modifyValue, RevisionCache, type KV } from "@corral/shared";

/** The counter numbering a cluster's jobs after its create. */
export const jobCounterName = (clusterId: string) => `plans.${clusterId}`;

/** Monotonic counters (cluster ids, job numbers); a number handed out is never handed out again. */
export interface Counters {
  /**
   * The next number of `name`. With `block` > 1 this process takes that many numbers in one write and hands
   * them out from memory: concurrent callers do not queue on the counter, at the price of gaps (numbers left
   * unused when the process stops) and of numbers from two processes interleaving.
   */
  next(name: string, options?: { block?: number }): Promise<number>;
  /** Forgets a counter whose numbers are never needed again (a purged cluster's jobs). */
  remove(name: string): Promise<void>;
}

export function createCounters(kv: KV): Counters {
  const cache = new RevisionCache(1_000);
  const blocks = new Map<string, { next: number; end: number }>();
  const reserving = new Map<string, Promise<void>>();

  const take = async (name: string, count: number): Promise<number> => {
    const { value } = await modifyValue<number>(kv, name, (current) => ({ put: (current?.value ?? 0) + count }), { cache });
    return (value ?? count) - count + 1;
  };

  return {
    async next(name, options = {}) {
      const size = options.block ?? 1;
      if (size <= 1) return take(name, 1);
      for (;;) {
        const block = blocks.get(name);
        if (block && block.next <= block.end) return block.next++;
        let pending = reserving.get(name);
        if (!pending) {
          pending = take(name, size)
            .then((first) => void blocks.set(name, { next: first, end: first + size - 1 }))
            .finally(() => reserving.delete(name));
          reserving.set(name, pending);
        }
        await pending;
      }
    },
    async remove(name) {
      blocks.delete(name);
      cache.forget(name);
      await kv.purge(name);
    },
  };
}
