import { createHash } from "node:crypto";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { ObjectInfo } from "@nats-io/obj";
import { objectChunksSubject, objectStoreStream } from "@corral/contracts";

/** Chunks pulled per request: bounds what a reader holds in memory (128 KiB chunks -> about 1 MiB). */
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
 * Reads a stored object's chunks with backpressure. `ObjectStore.get()` pushes every chunk into an unbounded
 * ReadableStream as fast as the server sends them, so a slow consumer makes it hold the whole object; this pulls
 * a few chunks at a time through an ordered consumer on the object's chunk subject (the object store layout of
 * NATS ADR-20: stream `OBJ_<bucket>`, subject `$O.<bucket>.C.<nuid>`) and checks size and SHA-256 digest at the end.
 */
export async function* readObjectChunks(js: JetStreamClient, info: ObjectInfo): AsyncGenerator<Uint8Array> {
  if (info.size === 0) return;
  const consumer = await js.consumers.get(objectStoreStream(info.bucket), { filter_subjects: [objectChunksSubject(info.bucket, info.nuid)] });
  const messages = await consumer.consume({ max_messages: CHUNKS_IN_FLIGHT });
  const sha = createHash("sha256");
  let size = 0;
  const it = messages[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await nextWithin(it, `object ${info.name}`);
      if (next.done) break;
      const m = next.value;
      sha.update(m.data);
      size += m.data.length;
      yield m.data;
      if (m.info.pending === 0) break;
    }
  } finally {
    // Like leaving a for-await loop: stop the iterator, then close the consumer.
    await it.return?.();
    await messages.close().catch(() => {});
  }
  if (size !== info.size) throw new Error(`object ${info.name}: read ${size} bytes, expected ${info.size}`);
  const expected = info.digest.replace(/^SHA-256=/, "").replace(/=+$/, "");
  const actual = sha.digest("base64url");
  if (expected !== actual) throw new Error(`object ${info.name}: digest mismatch`);
}
