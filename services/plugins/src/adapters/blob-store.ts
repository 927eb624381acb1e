import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import type { ObjectStore } from "@nats-io/obj";
import { BadRequestError, objectStores } from "@corral/contracts";
import { openObjectStore, readObjectChunks } from "@corral/shared";

/** Sees every byte of an object while it is copied; throwing aborts the copy. */
export interface ByteInspector {
  write(chunk: Uint8Array): Promise<void>;
  end(): Promise<void>;
}

/** Resource bytes in the JetStream Object Store `corral_plugin_resources`; every copy streams with backpressure. */
export interface BlobStore {
  /**
   * Copies an upload the gateway stored (object store `corral_uploads`) to `object`, passing the bytes through
   * `inspect` on the way; on any failure nothing is left under `object`. Does not remove the upload.
   */
  takeUpload(upload: string, object: string, inspect?: ByteInspector): Promise<{ size: number }>;
  /** Removes an upload the gateway handed over (idempotent). */
  discardUpload(upload: string): Promise<void>;
  /** Copies a resource object to a new name. */
  copy(from: string, to: string): Promise<void>;
  /** Removes a resource object (idempotent). */
  delete(object: string): Promise<void>;
}

class JsBlobStore implements BlobStore {
  constructor(
    private readonly js: JetStreamClient,
    private readonly uploads: ObjectStore,
    private readonly resources: ObjectStore,
  ) {}

  async takeUpload(upload: string, object: string, inspect?: ByteInspector) {
    const info = await this.uploads.info(upload);
    if (!info || info.deleted) throw new BadRequestError("the uploaded body is no longer available; upload again");
    return this.copyFrom(this.uploads, upload, object, inspect);
  }

  async discardUpload(upload: string) {
    await this.uploads.delete(upload).catch(() => {});
  }

  async copy(from: string, to: string) {
    await this.copyFrom(this.resources, from, to);
  }

  async delete(object: string) {
    await this.resources.delete(object).catch(() => {});
  }

  private async copyFrom(store: ObjectStore, from: string, to: string, inspect?: ByteInspector): Promise<{ size: number }> {
    const info = await store.info(from);
    if (!info || info.deleted) throw new Error(`object ${from} does not exist`);
    const chunks = readObjectChunks(this.js, info);
    // Pull-based: the object store's put asks for the next chunk only when it has written the previous one.
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const next = await chunks.next();
          if (next.done) {
            await inspect?.end();
            controller.close();
            return;
          }
          await inspect?.write(next.value);
          controller.enqueue(next.value);
        },
        async cancel() {
          await chunks.return(undefined);
        },
      },
      { highWaterMark: 0 },
    );
    try {
      const stored = await this.resources.put({ name: to }, body);
      return { size: stored.size };
    } catch (err) {
      await chunks.return(undefined).catch(() => {});
      await this.resources.delete(to).catch(() => {});
      throw err;
    }
  }
}

export async function openBlobStore(nc: NatsConnection): Promise<BlobStore> {
  const [uploads, resources] = await Promise.all([
    openObjectStore(nc, objectStores.uploads),
    openObjectStore(nc, objectStores.pluginResources),
  ]);
  return new JsBlobStore(jetstream(nc), uploads, resources);
}
