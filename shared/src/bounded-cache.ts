/**
 * A map bounded in entries and in total weight (bytes, tasks, ...): past either bound the least recently used
 * entries go, never the one just set.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number }>();
  private total = 0;

  constructor(private readonly limits: { maxEntries?: number; maxWeight?: number }) {}

  /** Total weight held. */
  get weight(): number {
    return this.total;
  }

  /** The value, now the most recently used. */
  get(key: K): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  set(key: K, value: V, weight = 1): void {
    this.delete(key);
    this.entries.set(key, { value, weight });
    this.total += weight;
    const { maxEntries = Infinity, maxWeight = Infinity } = this.limits;
    while ((this.entries.size > maxEntries || this.total > maxWeight) && this.entries.size > 1) {
      this.delete(this.entries.keys().next().value as K);
    }
  }

  delete(key: K): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.total -= e.weight;
  }
}
