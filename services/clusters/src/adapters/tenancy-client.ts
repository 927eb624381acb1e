import type { NatsConnection } from "@nats-io/transport-node";
import {
  buckets,
  call,
  kvKey,
  liveTenantRecord,
  openBucket,
  pluginTypeKey,
  readValue,
  subjects,
  type CatalogSnapshot,
  type KV,
  type PluginSpec,
  type TenantRecordHead,
} from "@corral/shared";

/** What the clusters service reads from tenancy: tenants, a tenant's catalog, plugin types. */
export interface TenancyClient {
  /** The tenant's record; undefined when there is none or the tenant is being deleted. */
  tenant(name: string): Promise<TenantRecordHead | undefined>;
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
      return liveTenantRecord((await readValue<TenantRecordHead>(tenants, kvKey(name)))?.value);
    },
    catalog: (tenant) => call<CatalogSnapshot>(nc, subjects.tenancy.snapshot, { tenant }),
    async providerType(name) {
      return (await readValue<PluginSpec>(pluginTypes, pluginTypeKey("providertypes", name)))?.value;
    },
  };
}
