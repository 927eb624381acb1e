import type { NatsConnection } from "@nats-io/transport-node";
import type { OpenWatch } from "./follow-watch.js";
import { openBucket, readBytes } from "./kv.js";
import { ASSIGNMENT_KEY, buckets } from "@corral/contracts";

/**
 * How provisioners read the worker assignment tenancy's balancer writes (provisioners.ts). Values are the
 * encoded `WorkerAssignment`, undecoded: a provisioner decides itself what to do with one it cannot read.
 */
export interface AssignmentReader {
  /** The assignment in force; undefined before the first one was written (or after it was removed). */
  get(): Promise<Uint8Array | undefined>;
  /** The assignment now and after every change (undefined: removed), until stopped. */
  watch(): Promise<OpenWatch<Uint8Array | undefined>>;
}

export async function openAssignmentReader(nc: NatsConnection): Promise<AssignmentReader> {
  const kv = await openBucket(nc, buckets.assignments);
  return {
    async get() {
      return (await readBytes(kv, ASSIGNMENT_KEY))?.value;
    },
    async watch() {
      const entries = await kv.watch({ key: ASSIGNMENT_KEY });
      const items = (async function* () {
        for await (const e of entries) yield e.operation === "PUT" ? e.value : undefined;
      })();
      return { items, stop: () => entries.stop() };
    },
  };
}
