import { once } from "node:events";
import { createWriteStream } from "node:fs";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { ObjectStore } from "@nats-io/obj";
import { readObjectChunks } from "@corral/shared";

/**
 * Downloads a plugin resource object to `file` with backpressure; `readObjectChunks` checks its size and
 * SHA-256 digest.
 */
export async function downloadObject(js: JetStreamClient, store: ObjectStore, object: string, file: string): Promise<number> {
  const info = await store.info(object);
  if (!info || info.deleted) throw new Error(`resource object ${object} does not exist`);
  const out = createWriteStream(file, { mode: 0o600 });
  const failed = new Promise<never>((_, reject) => out.once("error", reject));
  failed.catch(() => {});
  let size = 0;
  try {
    for await (const chunk of readObjectChunks(js, info)) {
      size += chunk.length;
      if (!out.write(chunk)) await Promise.race([once(out, "drain"), failed]);
    }
    out.end();
    await Promise.race([once(out, "finish"), failed]);
  } finally {
    out.destroy();
  }
  return size;
}
