import type { NatsConnection } from "@nats-io/transport-node";
import {
  buckets,
  kvKey,
  listValues,
  openBucket,
  readValue,
  type KV,
  type PluginKind,
  type PluginSpec,
  type Provisioner,
} from "@corral/shared";

/** Read side of what provisioners announce: themselves and the plugin types they carry. */
export interface RegistryStore {
  provisioner(id: string): Promise<Provisioner | undefined>;
  provisioners(): Promise<Provisioner[]>;
  /** Every plugin type of one kind by name. */
  pluginTypes(kind: PluginKind): Promise<Map<string, PluginSpec>>;
}

class KvRegistryStore implements RegistryStore {
  constructor(
    private readonly provisionersKv: KV,
    private readonly pluginTypesKv: KV,
  ) {}
  async provisioner(id: string) {
    return (await readValue<Provisioner>(this.provisionersKv, kvKey(id)))?.value;
  }
  async provisioners() {
    const all = (await listValues<Provisioner>(this.provisionersKv)).map((e) => e.value);
    return all.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
  async pluginTypes(kind: PluginKind) {
    const entries = await listValues<PluginSpec>(this.pluginTypesKv, `${kind}.*`);
    return new Map(entries.map((e) => [e.value.name, e.value]));
  }
}

export async function openRegistryStore(nc: NatsConnection): Promise<RegistryStore> {
  const [p, t] = await Promise.all([openBucket(nc, buckets.provisioners), openBucket(nc, buckets.pluginTypes)]);
  return new KvRegistryStore(p, t);
}

