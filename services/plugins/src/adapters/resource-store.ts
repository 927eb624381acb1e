import type { NatsConnection } from "@nats-io/transport-node";
import {
  buckets,
  fromKeyToken,
  keyToken,
  kvKey,
} from "@corral/contracts";
import {
  deleteValue,
  listKeys,
  listValues,
  modifyValue,
  openBucket,
  readValue,
  type KV,
  type Modification,
  type Versioned,
} from "@corral/shared";
import { PLUGIN_KINDS, type PluginKind, type ResourceAddress, type ResourceRecord } from "../domain/resource-record.js";

/** Resource metadata in KV (bucket `corral_plugin_meta`): one key per tenant/kind/plugin/type/resource. */
export interface ResourceStore {
  get(address: ResourceAddress): Promise<Versioned<ResourceRecord> | undefined>;
  /** Compare-and-set read-modify-write (`fn` may run more than once). Returns what was written or kept. */
  modify(
    address: ResourceAddress,
    fn: (current: Versioned<ResourceRecord> | undefined) => Modification<ResourceRecord>,
  ): Promise<ResourceRecord | undefined>;
  /** Every resource of one resource type, by resource name. */
  listType(tenant: string, kind: PluginKind, plugin: string, resourceType: string): Promise<Map<string, ResourceRecord>>;
  /** Every resource of a tenant. */
  listTenant(tenant: string): Promise<Array<{ address: ResourceAddress; record: ResourceRecord }>>;
  /** Every tenant that has resource metadata. */
  tenants(): Promise<string[]>;
  /** Removes a resource's key (only when it is still at `revision`). */
  remove(address: ResourceAddress, revision: number): Promise<boolean>;
}

const keyOf = (a: ResourceAddress) => kvKey(a.tenant, a.kind, a.plugin, a.resourceType, a.resource);

function addressOf(key: string): ResourceAddress | undefined {
  const parts = key.split(".");
  if (parts.length !== 5) return undefined;
  const [tenant, kind, plugin, resourceType, resource] = parts.map(fromKeyToken) as [string, string, string, string, string];
  if (!(PLUGIN_KINDS as readonly string[]).includes(kind)) return undefined;
  return { tenant, kind: kind as PluginKind, plugin, resourceType, resource };
}

class KvResourceStore implements ResourceStore {
  constructor(private readonly kv: KV) {}
  get(address: ResourceAddress) {
    return readValue<ResourceRecord>(this.kv, keyOf(address));
  }
  async modify(
    address: ResourceAddress,
    fn: (current: Versioned<ResourceRecord> | undefined) => Modification<ResourceRecord>,
  ) {
    return (await modifyValue<ResourceRecord>(this.kv, keyOf(address), fn)).value;
  }
  async listType(tenant: string, kind: PluginKind, plugin: string, resourceType: string) {
    const prefix = kvKey(tenant, kind, plugin, resourceType);
    const out = new Map<string, ResourceRecord>();
    for (const { key, value } of await listValues<ResourceRecord>(this.kv, `${prefix}.*`)) {
      const address = addressOf(key);
      if (address) out.set(address.resource, value);
    }
    return out;
  }
  async listTenant(tenant: string) {
    const out: Array<{ address: ResourceAddress; record: ResourceRecord }> = [];
    for (const { key, value } of await listValues<ResourceRecord>(this.kv, `${keyToken(tenant)}.>`)) {
      const address = addressOf(key);
      if (address) out.push({ address, record: value });
    }
    return out;
  }
  async tenants() {
    const names = new Set<string>();
    for (const key of await listKeys(this.kv)) names.add(fromKeyToken(key.split(".")[0] ?? ""));
    return [...names];
  }
  remove(address: ResourceAddress, revision: number) {
    return deleteValue(this.kv, keyOf(address), revision);
  }
}

export async function openResourceStore(nc: NatsConnection): Promise<ResourceStore> {
  return new KvResourceStore(await openBucket(nc, buckets.pluginResources));
}

/** Object names carry the resource's coordinates (for people looking at the store) and a unique suffix. */
export function objectNameFor(address: ResourceAddress, unique: string): string {
  return `${keyOf(address)}.${unique}`;
}
