import { createHash } from "node:crypto";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { ObjectStore } from "@nats-io/obj";

/** Chunks pulled per request (128 KiB each): what a download holds in memory at most, roughly. */
const CHUNKS_IN_FLIGHT = 8;
/** A read that gets no chunk for this long fails (the object was deleted or the stream lost). */
const STALL_MS = 30_000;

/** The next message, or an error once none came for STALL_MS. */
async function nextWithin<T>(it: AsyncIterator<T>, what: string): Promise<IteratorResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      it.next(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no data for ${STALL_MS} ms`)), STALL_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Downloads a plugin resource object to `file` with backpressure, checking its size and SHA-256 digest.
 * `ObjectStore.get()` would push every chunk into an unbounded stream as fast as the server sends it; this pulls a
 * few chunks at a time through an ordered consumer on the object's chunk subject (object store layout of NATS
 * ADR-20: stream `OBJ_<bucket>`, subject `$O.<bucket>.C.<nuid>`).
 */
export async function downloadObject(js: JetStreamClient, store: ObjectStore, object: string, file: string): Promise<number> {
  const info = await store.info(object);
  if (!info || info.deleted) throw new Error(`resource object ${object} does not exist`);
  const out = createWriteStream(file, { mode: 0o600 });
  const failed = new Promise<never>((_, reject) => out.once("error", reject));
  failed.catch(() => {});
  const sha = createHash("sha256");
  let size = 0;
  try {
    if (info.size > 0) {
      const consumer = await js.consumers.get(`OBJ_${info.bucket}`, { filter_subjects: [`$O.${info.bucket}.C.${info.nuid}`] });
      const messages = await consumer.consume({ max_messages: CHUNKS_IN_FLIGHT });
      const it = messages[Symbol.asyncIterator]();
      try {
        for (;;) {
          const next = await nextWithin(it, `resource object ${object}`);
          if (next.done) break;
          const m = next.value;
          sha.update(m.data);
          size += m.data.length;
          if (!out.write(m.data)) await Promise.race([once(out, "drain"), failed]);
          if (m.info.pending === 0) break;
        }
      } finally {
        // Like leaving a for-await loop: stop the iterator, then close the consumer.
        await it.return?.();
        await messages.close().catch(() => {});
      }
    }
    out.end();
    await Promise.race([once(out, "finish"), failed]);
  } finally {
    out.destroy();
  }
  if (size !== info.size) throw new Error(`resource object ${object}: got ${size} bytes, expected ${info.size}`);
  if (info.size > 0) {
    const expected = info.digest.replace(/^SHA-256=/, "").replace(/=+$/, "");
    if (sha.digest("base64url") !== expected) throw new Error(`resource object ${object}: digest mismatch`);
  }
  return size;
}
