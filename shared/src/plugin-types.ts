import type { NatsConnection } from "@nats-io/transport-node";
import { type PluginKind, type PluginSpec, pluginTypeKey, buckets } from "@corral/contracts";
import { listValues, openBucket, readValue } from "./kv.js";

/**
 * The plugin types provisioners announce (provisioners.ts: each writes its specifications under
 * `pluginTypeKey(kind, name)`). Services read them only through this.
 */
export interface PluginTypeReader {
  get(kind: PluginKind, name: string): Promise<PluginSpec | undefined>;
  /** Every specification of a kind, in name order. */
  list(kind: PluginKind): Promise<PluginSpec[]>;
}

const byName = (a: PluginSpec, b: PluginSpec) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export async function openPluginTypeReader(nc: NatsConnection): Promise<PluginTypeReader> {
  const kv = await openBucket(nc, buckets.pluginTypes);
  return {
    get: async (kind, name) => (await readValue<PluginSpec>(kv, pluginTypeKey(kind, name)))?.value,
    list: async (kind) => (await listValues<PluginSpec>(kv, `${kind}.*`)).map((e) => e.value).sort(byName),
  };
}
