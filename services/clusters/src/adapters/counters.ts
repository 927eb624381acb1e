import { modifyValue, type KV } from "@corral/shared";

/** Monotonic counters (cluster ids); an id handed out is never handed out again. */
export async function nextCount(kv: KV, name: string): Promise<number> {
  const { value } = await modifyValue<number>(kv, name, (current) => ({ put: (current?.value ?? 0) + 1 }));
  return value ?? 1;
}
