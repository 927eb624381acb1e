import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, decode } from "@corral/contracts";
import { createValue, openBucket, readBytes, type KV, type Logger } from "@corral/shared";
import { KEY_ID_PATTERN, newSecret, type SigningKey } from "../domain/token.js";

/**
 * The HMAC keys tokens are signed with, shared through the JetStream KV bucket `corral_auth_keys`
 * (key id -> `{secret, createdAtMs}`). The token server creates the first key (`k1`) when the bucket is
 * empty; every holder watches the bucket, so an added key is usable everywhere within milliseconds and a
 * deleted key stops validating the tokens it signed. Anyone who can read the bucket can mint tokens: NATS
 * access is trusted, as it is for every other service.
 */
export interface SigningKeys {
  /** Secret of a key id from memory; undefined when unknown. */
  secretOf(keyId: string): Buffer | undefined;
  /** Like `secretOf`, but asks the bucket on a miss (at most once a second per key id). */
  lookup(keyId: string): Promise<Buffer | undefined>;
  /** The newest key: the one to sign with. */
  current(): SigningKey | undefined;
  stop(): void;
}

interface StoredKey {
  secret: Uint8Array;
  createdAtMs: number;
}

export const FIRST_KEY_ID = "k1";
const MISS_RETRY_MS = 1000;
const MAX_MISSES = 1000;

export interface OpenSigningKeysOptions {
  nc: NatsConnection;
  log: Logger;
  /** Create the first key when there is none (the token server does; gateways only read). @default false */
  ensureKey?: boolean;
  /** @default Date.now */
  clock?: () => number;
}

export async function openSigningKeys(options: OpenSigningKeysOptions): Promise<SigningKeys> {
  const { nc, log } = options;
  const clock = options.clock ?? Date.now;
  const kv: KV = await openBucket(nc, buckets.authKeys, { history: 1 });
  const keys = new Map<string, { secret: Buffer; createdAtMs: number }>();
  const misses = new Map<string, number>();
  const remember = (id: string, data: Uint8Array): void => {
    try {
      const stored = decode<StoredKey>(data);
      if (!KEY_ID_PATTERN.test(id) || !stored?.secret || stored.secret.length < 16) throw new Error("bad key record");
      keys.set(id, { secret: Buffer.from(stored.secret), createdAtMs: Number(stored.createdAtMs) || 0 });
      misses.delete(id);
    } catch (err) {
      log.warn("ignoring an unreadable signing key", { keyId: id, err });
    }
  };
  const fetch = async (id: string): Promise<void> => {
    const entry = await readBytes(kv, id);
    if (entry) remember(id, entry.value);
  };

  if (options.ensureKey) {
    await createValue<StoredKey>(kv, FIRST_KEY_ID, { secret: newSecret(), createdAtMs: clock() }).catch((err: unknown) => {
      throw new Error(`cannot create the first signing key: ${(err as Error).message}`, { cause: err });
    });
  }
  for await (const id of await kv.keys()) await fetch(id);
  const watcher = await kv.watch({ key: ">" });
  void (async () => {
    for await (const e of watcher) {
      if (e.operation === "PUT") remember(e.key, e.value);
      else keys.delete(e.key);
    }
  })().catch((err: unknown) => log.warn("signing key watch ended", { err }));

  return {
    secretOf: (id) => keys.get(id)?.secret,
    async lookup(id) {
      const known = keys.get(id);
      if (known) return known.secret;
      if (!KEY_ID_PATTERN.test(id)) return undefined;
      const now = clock();
      const last = misses.get(id);
      if (last !== undefined && now - last < MISS_RETRY_MS) return undefined;
      if (misses.size >= MAX_MISSES) misses.clear();
      misses.set(id, now);
      await fetch(id).catch((err: unknown) => log.warn("signing key lookup failed", { keyId: id, err }));
      return keys.get(id)?.secret;
    },
    current() {
      let best: SigningKey | undefined;
      let bestAt = -Infinity;
      for (const [id, k] of keys) {
        if (k.createdAtMs > bestAt || (k.createdAtMs === bestAt && best && id > best.id)) {
          best = { id, secret: k.secret };
          bestAt = k.createdAtMs;
        }
      }
      return best;
    },
    stop() {
      watcher.stop();
    },
  };
}
