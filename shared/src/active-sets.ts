import type { NatsConnection } from "@nats-io/transport-node";
import { openBucket, readValue } from "./kv.js";
import { fromKeyToken, kvKey, buckets } from "@corral/contracts";

/**
 * A tenant's live plugin resources: the plugins service's sync publishes one set per tenant (key `kvKey(tenant)`
 * in `buckets.pluginActive`), provisioners install exactly that set. Like Coopr's resources payload:
 * kind -> plugin -> resource type -> what must be installed.
 */
export interface ActiveSet {
  tenant: string;
  /** Grows by one with every publication. */
  generation: number;
  /** ms */
  publishedAt: number;
  automatortypes: Record<string, Record<string, ActiveResourceType>>;
  providertypes: Record<string, Record<string, ActiveResourceType>>;
}

export type ResourceFormat = "file" | "archive";

/** The live resources of one resource type, with how to install them. */
export interface ActiveResourceType {
  format: ResourceFormat;
  /** Octal file mode from the plugin specification (file resources only). */
  permissions?: string;
  active: ActiveResource[];
}

/** One live resource version as provisioners fetch it. */
export interface ActiveResource {
  name: string;
  version: number;
  /** Object name in the plugin resources object store. */
  object: string;
  size: number;
  format: ResourceFormat;
}

/** How provisioners read the published sets (the plugins service alone writes them). */
export interface ActiveSetReader {
  /** The tenant's set as published, unchecked (a reader checks what it uses); undefined when none or purged. */
  get(tenant: string): Promise<unknown>;
  /** The tenant of every stored set, then of every set written or removed from now on, until stopped. */
  watch(): Promise<{ tenants: AsyncIterable<string>; stop(): void }>;
}

export async function openActiveSetReader(nc: NatsConnection): Promise<ActiveSetReader> {
  const kv = await openBucket(nc, buckets.pluginActive);
  return {
    async get(tenant) {
      return (await readValue<unknown>(kv, kvKey(tenant)))?.value;
    },
    async watch() {
      const entries = await kv.watch({ key: ">" });
      const tenants = (async function* () {
        for await (const e of entries) yield fromKeyToken(e.key);
      })();
      return { tenants, stop: () => entries.stop() };
    },
  };
}
