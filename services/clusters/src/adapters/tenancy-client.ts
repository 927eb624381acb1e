import type { NatsConnection } from "@nats-io/transport-node";
import {
  buckets,
  call,
  kvKey,
  openBucket,
  pluginTypeKey,
  readValue,
  subjects,
  type CatalogSnapshot,
  type KV,
  type PluginSpec,
  type Tenant,
} from "@corral/shared";

/** What the clusters service reads from tenancy: tenants, a tenant's catalog, plugin types. */
export interface TenancyClient {
  tenant(name: string): Promise<Tenant | undefined>;
  catalog(tenant: string): Promise<CatalogSnapshot>;
  providerType(name: string): Promise<PluginSpec | undefined>;
}

export async function openTenancyClient(nc: NatsConnection): Promise<TenancyClient> {
  const [tenants, pluginTypes]: [KV, KV] = await Promise.all([
    openBucket(nc, buckets.tenants),
    openBucket(nc, buckets.pluginTypes),
  ]);
  return {
    async tenant(name) {
      return (await readValue<{ tenant: Tenant }>(tenants, kvKey(name)))?.value.tenant;
    },
    catalog: (tenant) => call<CatalogSnapshot>(nc, subjects.tenancy.snapshot, { tenant }),
    async providerType(name) {
      return (await readValue<PluginSpec>(pluginTypes, pluginTypeKey("providertypes", name)))?.value;
    },
  };
}
