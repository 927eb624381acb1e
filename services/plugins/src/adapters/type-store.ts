import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, listValues, openBucket, pluginTypeKey, readValue, type KV, type PluginSpec } from "@corral/shared";
import type { PluginKind } from "../domain/resource-record.js";

/** Plugin specifications as provisioners announce them (bucket `corral_plugintypes`); read-only here. */
export interface PluginTypeStore {
  get(kind: PluginKind, name: string): Promise<PluginSpec | undefined>;
  /** Every specification of a kind, in name order. */
  list(kind: PluginKind): Promise<PluginSpec[]>;
}

class KvPluginTypeStore implements PluginTypeStore {
  constructor(private readonly kv: KV) {}
  async get(kind: PluginKind, name: string) {
    const found = await readValue<PluginSpec>(this.kv, pluginTypeKey(kind, name));
    return found?.value;
  }
  async list(kind: PluginKind) {
    const all = await listValues<PluginSpec>(this.kv, `${kind}.*`);
    return all.map((e) => e.value).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

export async function openPluginTypeStore(nc: NatsConnection): Promise<PluginTypeStore> {
  return new KvPluginTypeStore(await openBucket(nc, buckets.pluginTypes));
}
