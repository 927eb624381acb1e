import type { NatsConnection } from "@nats-io/transport-node";
import type { OpenWatch } from "./follow-watch.js";
import { openBucket, readValue } from "./kv.js";
import { fromKeyToken, kvKey, buckets } from "@corral/contracts";

/** How provisioners read the published sets (each an `ActiveSet`; the plugins service alone writes them). */
export interface ActiveSetReader {
  /** The tenant's set as published, unchecked (a reader checks what it uses); undefined when none or purged. */
  get(tenant: string): Promise<unknown>;
  /** The tenant of every stored set, then of every set written or removed from now on, until stopped. */
  watch(): Promise<OpenWatch<string>>;
}

export async function openActiveSetReader(nc: NatsConnection): Promise<ActiveSetReader> {
  const kv = await openBucket(nc, buckets.pluginActive);
  return {
    async get(tenant) {
      return (await readValue<unknown>(kv, kvKey(tenant)))?.value;
    },
    async watch() {
      const entries = await kv.watch({ key: ">" });
      const items = (async function* () {
        for await (const e of entries) yield fromKeyToken(e.key);
      })();
      return { items, stop: () => entries.stop() };
    },
  };
}
