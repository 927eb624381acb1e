import { randomUUID } from "node:crypto";
import type { HttpResponse } from "uWebSockets.js";
import type { NatsConnection } from "@nats-io/transport-node";
import { objectStores } from "@corral/contracts";
import { openObjectStore, type ObjectStore } from "@corral/shared";
import { BodyDrain, BodyTooLargeError, type Exchange } from "./http.js";

/** Streams raw request bodies into the uploads object store, with backpressure, never holding them whole. */
export interface UploadSink {
  /** Stores the body; resolves with its object name and size. BodyTooLargeError past `maxBytes`. */
  receive(res: HttpResponse, exchange: Exchange, maxBytes: number): Promise<{ object: string; size: number }>;
  discard(object: string): Promise<void>;
}

export async function openUploadSink(nc: NatsConnection): Promise<UploadSink> {
  const store: ObjectStore = await openObjectStore(nc, objectStores.uploads);
  return {
    async receive(res, exchange, maxBytes) {
      const object = `upload-${randomUUID()}`;
      let size = 0;
      let failed = false;
      // uWS: resume() on a response that is not paused breaks the request (its body stops after the first chunk).
      let paused = false;
      // Past the limit the store gets an error at once; the 413 waits until the rest of the body is drained.
      let drain: BodyDrain | undefined;
      const body = new ReadableStream<Uint8Array>(
        {
          start(controller) {
            exchange.onAbort(() => {
              drain?.cancel();
              if (!failed) {
                failed = true;
                controller.error(new Error("client aborted the upload"));
              }
            });
            res.onData((ab, isLast) => {
              if (drain) return drain.add(ab.byteLength, isLast);
              if (failed) return;
              size += ab.byteLength;
              if (size > maxBytes) {
                failed = true;
                const started = new BodyDrain();
                drain = started;
                started.add(size - maxBytes, isLast);
                controller.error(new BodyTooLargeError(maxBytes));
                return;
              }
              controller.enqueue(new Uint8Array(ab.slice(0)));
              if (isLast) controller.close();
              else if ((controller.desiredSize ?? 1) <= 0) {
                paused = true;
                res.pause();
              }
            });
          },
          pull() {
            if (paused && !failed && !exchange.finished) {
              paused = false;
              res.resume();
            }
          },
        },
        new CountQueuingStrategy({ highWaterMark: 16 }),
      );
      try {
        await store.put({ name: object }, body);
      } catch (err) {
        await store.delete(object).catch(() => {});
        if (!drain) throw err;
        await drain.drained;
        throw new BodyTooLargeError(maxBytes);
      }
      return { object, size };
    },
    async discard(object) {
      await store.delete(object).catch(() => {});
    },
  };
}
