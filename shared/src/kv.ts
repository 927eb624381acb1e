import type { NatsConnection } from "@nats-io/transport-node";
import { Kvm, type KV, type KvOptions } from "@nats-io/kv";
import { decode, encode } from "./codec.js";
import { CorralError } from "./errors.js";

export type { KV } from "@nats-io/kv";

/** Opens a KV bucket, creating it when absent (idempotent across instances). */
export async function openBucket(nc: NatsConnection, name: string, options: Partial<KvOptions> = {}): Promise<KV> {
  return new Kvm(nc).create(name, { history: 1, ...options });
}

/** A value and the revision it was read at. */
export interface Versioned<T> {
  value: T;
  revision: number;
}

/** The KV's "wrong last sequence" (compare-and-set lost); recognised by code, not by class. */
export function isCasConflict(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return e?.code === 10071 || (typeof e?.message === "string" && e.message.includes("wrong last sequence"));
}

/** Reads and decodes a key; a deleted or absent key is `undefined`. */
export async function readValue<T>(kv: KV, key: string): Promise<Versioned<T> | undefined> {
  const entry = await kv.get(key);
  if (!entry || entry.operation !== "PUT") return undefined;
  return { value: decode<T>(entry.value), revision: entry.revision };
}

/** Writes a key only when it does not exist. Returns the revision, or `undefined` when it already exists. */
export async function createValue<T>(kv: KV, key: string, value: T): Promise<number | undefined> {
  try {
    return await kv.create(key, encode(value));
  } catch (err) {
    if (isCasConflict(err)) return undefined;
    throw err;
  }
}

/** Writes a key only when it is still at `revision`. Returns the new revision, or `undefined` on conflict. */
export async function updateValue<T>(kv: KV, key: string, value: T, revision: number): Promise<number | undefined> {
  try {
    return await kv.update(key, encode(value), revision);
  } catch (err) {
    if (isCasConflict(err)) return undefined;
    throw err;
  }
}

/** Deletes a key only when it is still at `revision`; false on conflict. */
export async function deleteValue(kv: KV, key: string, revision?: number): Promise<boolean> {
  try {
    await kv.delete(key, revision === undefined ? undefined : { previousSeq: revision });
    return true;
  } catch (err) {
    if (isCasConflict(err)) return false;
    throw err;
  }
}

export interface ModifyOptions {
  /** @default 100 */
  maxAttempts?: number;
}

/**
 * Writers of one key inside this process take turns, so compare-and-set only races against other
 * processes; without it N local writers need up to N rounds of conflicts.
 */
const localTurns = new Map<string, Promise<unknown>>();

async function inTurn<T>(lockKey: string, fn: () => Promise<T>): Promise<T> {
  const previous = localTurns.get(lockKey) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  localTurns.set(lockKey, settled);
  try {
    return await run;
  } finally {
    if (localTurns.get(lockKey) === settled) localTurns.delete(lockKey);
  }
}

/** What a modify function decides: write `value`, delete the key, or leave it. */
export type Modification<T> = { put: T } | { delete: true } | { keep: true };

/**
 * Read-modify-write with compare-and-set and bounded retry. `modify` receives the current value (or
 * `undefined`) and returns a Modification, or throws to abort (the error propagates). `modify` may run more
 * than once, so it must be pure. Returns what was finally written (or kept) and the revision.
 */
export function modifyValue<T>(
  kv: KV,
  key: string,
  modify: (current: Versioned<T> | undefined) => Modification<T> | Promise<Modification<T>>,
  options: ModifyOptions = {},
): Promise<{ value: T | undefined; revision: number }> {
  return inTurn(`${(kv as { bucket?: string }).bucket ?? ""}\u0000${key}`, () => casLoop(kv, key, modify, options));
}

async function casLoop<T>(
  kv: KV,
  key: string,
  modify: (current: Versioned<T> | undefined) => Modification<T> | Promise<Modification<T>>,
  options: ModifyOptions,
): Promise<{ value: T | undefined; revision: number }> {
  const maxAttempts = options.maxAttempts ?? 100;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const current = await readValue<T>(kv, key);
    const decision = await modify(current);
    if ("keep" in decision) return { value: current?.value, revision: current?.revision ?? 0 };
    if ("delete" in decision) {
      if (!current) return { value: undefined, revision: 0 };
      if (await deleteValue(kv, key, current.revision)) return { value: undefined, revision: 0 };
      continue;
    }
    const revision = current
      ? await updateValue(kv, key, decision.put, current.revision)
      : await createValue(kv, key, decision.put);
    if (revision !== undefined) return { value: decision.put, revision };
    // Full jitter, growing to 100 ms: spreads writers of other processes apart.
    await new Promise((r) => setTimeout(r, Math.min(100, 2 ** attempt) * Math.random()));
  }
  throw new CorralError(503, "contention", `too many concurrent writes to ${key}, try again`);
}

/** Lists the keys matching a filter (`>` wildcards allowed). */
export async function listKeys(kv: KV, filter = ">"): Promise<string[]> {
  const keys: string[] = [];
  for await (const k of await kv.keys(filter)) keys.push(k);
  return keys;
}

/** Reads every live value under a filter, with keys. */
export async function listValues<T>(kv: KV, filter = ">"): Promise<Array<{ key: string; value: T }>> {
  const keys = await listKeys(kv, filter);
  const entries = await Promise.all(keys.map(async (key) => ({ key, entry: await readValue<T>(kv, key) })));
  const out: Array<{ key: string; value: T }> = [];
  for (const { key, entry } of entries) if (entry) out.push({ key, value: entry.value });
  return out;
}
