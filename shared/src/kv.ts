import type { NatsConnection } from "@nats-io/transport-node";
import { Kvm, type KV, type KvOptions } from "@nats-io/kv";
import { jetstreamManager } from "@nats-io/jetstream";
import { decode, encode, CorralError, bucketSettings, kvStream, kvSubjectPrefix } from "@corral/contracts";
import { BoundedCache } from "./bounded-cache.js";
import { jsRequests } from "./js-requests.js";
import { sleep } from "./retry.js";
import { storeReplicas } from "./replicas.js";

export type { KV } from "@nats-io/kv";

/**
 * Where the helpers below find a bucket's stream: nats.js's KV does not expose its connection, so `openBucket`
 * records it. The helpers talk to the stream directly (js-requests.ts: one reply subscription per connection
 * instead of nats.js's per-request objects, timers and Errors), which only a bucket opened here allows.
 */
interface BucketAddress {
  nc: NatsConnection;
  stream: string;
  /** Subject prefix of the bucket's keys. */
  prefix: string;
}

const openedBuckets = new WeakMap<KV, BucketAddress>();

function addressOf(kv: KV): BucketAddress {
  const address = openedBuckets.get(kv);
  if (!address) throw new Error("a KV bucket handed to the shared KV helpers must be opened with openBucket");
  return address;
}

/**
 * Opens a KV bucket, creating it when absent (idempotent across instances), with its `bucketSettings` and the
 * connection's replica count (replicas.ts).
 */
export async function openBucket(nc: NatsConnection, name: string, options: Partial<KvOptions> = {}): Promise<KV> {
  const kv = await new Kvm(nc).create(name, { history: 1, replicas: storeReplicas(nc), ...bucketSettings[name], ...options });
  openedBuckets.set(kv, { nc, stream: kvStream(name), prefix: kvSubjectPrefix(name) });
  return kv;
}

interface RawEntry {
  operation: "PUT" | "DEL" | "PURGE";
  revision: number;
  bytes: Uint8Array;
}

async function readEntry(kv: KV, key: string): Promise<RawEntry | undefined> {
  const { nc, stream, prefix } = addressOf(kv);
  const m = await jsRequests(nc).lastBySubject(stream, prefix + key);
  if (!m) return undefined;
  const op = m.header("KV-Operation");
  return { operation: op === "DEL" || op === "PURGE" ? op : "PUT", revision: m.seq, bytes: m.data };
}

/** Writes bytes to a key; `expect` is the compare-and-set revision (0: the key must not exist). */
async function writeBytes(kv: KV, key: string, bytes: Uint8Array, expect?: number): Promise<number> {
  const { nc, prefix } = addressOf(kv);
  return jsRequests(nc).publish(prefix + key, bytes, expect === undefined ? {} : { expectLastSubjectSequence: expect });
}

/** A value and the revision it was read at. */
export interface Versioned<T> {
  value: T;
  revision: number;
}

/** The KV's "wrong last sequence" (compare-and-set lost); recognised by code, not by class. */
export function isCasConflict(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return e?.code === 10071 || e?.code === 10164 || (typeof e?.message === "string" && e.message.includes("wrong last sequence"));
}

/**
 * Reads a key's stored bytes, undecoded; a deleted or purged key (KV-Operation DEL/PURGE) or an absent one is
 * `undefined`. Unlike nats.js's `kv.get` (a direct get whenever the bucket allows, which a lagging replica answers
 * with the value from before the last write), this asks the stream leader on a NATS cluster (js-requests.ts).
 */
export async function readBytes(kv: KV, key: string): Promise<Versioned<Uint8Array> | undefined> {
  const entry = await readEntry(kv, key);
  return entry?.operation === "PUT" ? { value: entry.bytes, revision: entry.revision } : undefined;
}

/** Reads and decodes a key; a deleted or absent key is `undefined`. A given cache learns what was read. */
export async function readValue<T>(kv: KV, key: string, cache?: RevisionCache): Promise<Versioned<T> | undefined> {
  const entry = await readBytes(kv, key);
  if (!entry) {
    cache?.forget(key);
    return undefined;
  }
  cache?.remember(key, entry.value, entry.revision);
  return { value: decode<T>(entry.value), revision: entry.revision };
}

/** Writes a key unconditionally; a given cache learns the new revision. */
export async function putValue<T>(kv: KV, key: string, value: T, cache?: RevisionCache): Promise<number> {
  const bytes = encode(value);
  const revision = await writeBytes(kv, key, bytes);
  cache?.remember(key, bytes, revision);
  return revision;
}

/**
 * Writes a key only when it does not exist (or was deleted). Returns the revision, or `undefined` when it
 * already exists.
 */
export async function createValue<T>(kv: KV, key: string, value: T, cache?: RevisionCache): Promise<number | undefined> {
  const bytes = encode(value);
  let expect = 0;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const revision = await writeBytes(kv, key, bytes, expect);
      cache?.remember(key, bytes, revision);
      return revision;
    } catch (err) {
      if (!isCasConflict(err)) throw err;
    }
    // A deleted key still has a last sequence (its delete marker): it may be created again over it.
    const current = await readEntry(kv, key);
    if (!current || current.operation === "PUT") return undefined;
    expect = current.revision;
  }
  return undefined;
}

/** Writes a key only when it is still at `revision`. Returns the new revision, or `undefined` on conflict. */
export async function updateValue<T>(
  kv: KV,
  key: string,
  value: T,
  revision: number,
  cache?: RevisionCache,
): Promise<number | undefined> {
  try {
    const bytes = encode(value);
    const written = await writeBytes(kv, key, bytes, revision);
    cache?.remember(key, bytes, written);
    return written;
  } catch (err) {
    if (isCasConflict(err)) {
      cache?.forget(key);
      return undefined;
    }
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
  /**
   * Start from a cached guess instead of a read: `modify` first decides on the value this process last wrote or
   * read (see {@link RevisionCache}); a write decided on it is tried at the cached revision, and what it writes or
   * reads is remembered. Anything else (keep, delete, an error, a lost compare-and-set) is decided again on a read.
   */
  cache?: RevisionCache;
  /**
   * Writers of one key in this process wait for each other's turn (see {@link KeyTurns}), so compare-and-set races
   * only against other processes. `false`: they race each other too.
   * @default processTurns
   */
  turns?: KeyTurns | false;
}

/**
 * The last value this process wrote or read per key, as encoded bytes (every use decodes a fresh copy, so no
 * caller can change what the cache holds), bounded in entries and bytes by least-recent use. It is never
 * trusted for a read that must be current: only as a guess that compare-and-set confirms, or for fields that
 * never change.
 */
export class RevisionCache {
  private readonly entries: BoundedCache<string, { bytes: Uint8Array; revision: number }>;

  constructor(
    maxEntries = 20_000,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {
    this.entries = new BoundedCache({ maxEntries, maxWeight: maxBytes });
  }

  /** Bytes held now. */
  get size(): number {
    return this.entries.weight;
  }

  /** The cached value of `key` (possibly stale), decoded afresh. */
  peek<T>(key: string): Versioned<T> | undefined {
    const e = this.entries.get(key);
    return e && { value: decode<T>(e.bytes), revision: e.revision };
  }

  remember(key: string, bytes: Uint8Array, revision: number): void {
    const known = this.entries.get(key);
    if (known && known.revision > revision) return;
    this.forget(key);
    if (bytes.byteLength > this.maxBytes / 4) return; // one huge value would push out everything else
    // A copy: what callers pass may be a view into a larger buffer (a socket read, the encoder's scratch space).
    this.entries.set(key, { bytes: new Uint8Array(bytes), revision }, bytes.byteLength); // (Buffer.slice would be a view)
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The encoded size of the cached value of `key`, if one is held. */
  bytesOf(key: string): number | undefined {
    return this.entries.get(key)?.bytes.byteLength;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}

/**
 * Turn-taking per key: a writer of a key runs once every earlier writer of that key in this process has finished.
 * N local writers of one key then make N compare-and-set writes in a row (each starting from the value the one
 * before wrote, when a {@link RevisionCache} is given) instead of racing through up to N rounds of conflicts and
 * re-reads (measured in bench/clusters/compare-and-set.ts).
 */
export class KeyTurns {
  private readonly last = new Map<string, Promise<unknown>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.last.get(key) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.last.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.last.get(key) === settled) this.last.delete(key);
    }
  }

  /** Keys with a writer running or waiting. */
  get busyKeys(): number {
    return this.last.size;
  }
}

/** The turns every `modifyValue` of this process takes unless told otherwise. */
export const processTurns = new KeyTurns();

/** What a modify function decides: write `value`, delete the key, or leave it. */
export type Modification<T> = { put: T } | { delete: true } | { keep: true };

type ModifyFn<T> = (current: Versioned<T> | undefined) => Modification<T> | Promise<Modification<T>>;

/** What a modify finally wrote (or kept) and its revision. */
interface Modified<T> {
  value: T | undefined;
  revision: number;
}

/**
 * Read-modify-write with compare-and-set and bounded retry. `modify` receives the current value (or
 * `undefined`) and returns a Modification, or throws to abort (the error propagates). `modify` may run more
 * than once, so it must be pure. Returns what was finally written (or kept) and the revision.
 */
export function modifyValue<T>(kv: KV, key: string, modify: ModifyFn<T>, options: ModifyOptions = {}): Promise<Modified<T>> {
  const turns = options.turns ?? processTurns;
  const attempt = () => modifyNow(kv, key, modify, options);
  return turns === false ? attempt() : turns.run(`${addressOf(kv).stream}\u0000${key}`, attempt);
}

async function modifyNow<T>(kv: KV, key: string, modify: ModifyFn<T>, options: ModifyOptions): Promise<Modified<T>> {
  const { cache } = options;
  const guessed = cache ? await writeOnCachedGuess(kv, key, modify, cache) : undefined;
  return guessed ?? (await modifyFromReads(kv, key, modify, cache, options.maxAttempts ?? 100));
}

/**
 * The cached guess: `modify` decides on the value this process last wrote or read, with no read. Only a write is
 * taken from that decision, and only while the key is still at the cached revision. A decision to keep or delete,
 * and an error, may come from a stale value: they are dropped (`undefined`) for the caller to decide again on a
 * read, where an error the current value still causes is thrown.
 */
async function writeOnCachedGuess<T>(kv: KV, key: string, modify: ModifyFn<T>, cache: RevisionCache): Promise<Modified<T> | undefined> {
  const guess = cache.peek<T>(key);
  if (!guess) return undefined;
  let decision: Modification<T>;
  try {
    decision = await modify(guess);
  } catch {
    return undefined;
  }
  if (!("put" in decision)) return undefined;
  const revision = await updateValue(kv, key, decision.put, guess.revision, cache);
  return revision === undefined ? undefined : { value: decision.put, revision };
}

/** Read, decide, compare-and-set; on a conflict again from a fresh read, with jittered backoff. */
async function modifyFromReads<T>(
  kv: KV,
  key: string,
  modify: ModifyFn<T>,
  cache: RevisionCache | undefined,
  maxAttempts: number,
): Promise<Modified<T>> {
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const current = await readValue<T>(kv, key, cache);
    const decision = await modify(current);
    if ("keep" in decision) return { value: current?.value, revision: current?.revision ?? 0 };
    if ("delete" in decision) {
      if (!current) return { value: undefined, revision: 0 };
      if (await deleteValue(kv, key, current.revision)) {
        cache?.forget(key);
        return { value: undefined, revision: 0 };
      }
      continue;
    }
    const revision = current
      ? await updateValue(kv, key, decision.put, current.revision, cache)
      : await createValue(kv, key, decision.put, cache);
    if (revision !== undefined) return { value: decision.put, revision };
    // Full jitter, growing to 100 ms: spreads writers of other processes apart.
    await sleep(Math.min(100, 2 ** attempt) * Math.random());
  }
  throw new CorralError(503, "contention", `too many concurrent writes to ${key}, try again`);
}

/** Lists the keys matching a filter (`>` wildcards allowed). */
export async function listKeys(kv: KV, filter = ">"): Promise<string[]> {
  const keys: string[] = [];
  for await (const k of await kv.keys(filter)) keys.push(k);
  return keys;
}

/**
 * Removes every key matching a filter (`>` and `*` wildcards) with its whole history, in one stream purge however
 * many keys match. Leaves no delete markers: watchers of the bucket are not told, so use it only on buckets nobody
 * mirrors through a watch. Answers how many stored revisions were removed.
 */
export async function purgeKeys(kv: KV, filter: string): Promise<number> {
  const { nc, stream, prefix } = addressOf(kv);
  const jsm = await jetstreamManager(nc);
  return (await jsm.streams.purge(stream, { filter: prefix + filter })).purged;
}

/** Reads every live value under a filter, with keys. */
export async function listValues<T>(kv: KV, filter = ">"): Promise<Array<{ key: string; value: T }>> {
  const keys = await listKeys(kv, filter);
  const entries = await Promise.all(keys.map(async (key) => ({ key, entry: await readValue<T>(kv, key) })));
  const out: Array<{ key: string; value: T }> = [];
  for (const { key, entry } of entries) if (entry) out.push({ key, value: entry.value });
  return out;
}
