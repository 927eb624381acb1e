import { modifyValue, RevisionCache, type KV } from "@corral/shared";

/** Monotonic counters (cluster ids, job numbers); a number handed out is never handed out again. */
export interface Counters {
  next(name: string): Promise<number>;
}

export function createCounters(kv: KV): Counters {
  const cache = new RevisionCache(1_000);
  return {
    async next(name) {
      const { value } = await modifyValue<number>(kv, name, (current) => ({ put: (current?.value ?? 0) + 1 }), { cache });
      return value ?? 1;
    },
  };
}
