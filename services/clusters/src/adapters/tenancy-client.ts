import type { NatsConnection } from "@nats-io/transport-node";
import type { CatalogSnapshot, PluginSpec, TenantRecordHead } from "@corral/contracts";
import { callEndpoint, openPluginTypeReader, openTenantReader } from "@corral/shared";

/** What the clusters service reads from tenancy: tenants, a tenant's catalog, plugin types. */
export interface TenancyClient {
  /** The tenant's record; undefined when there is none or the tenant is being deleted. */
  tenant(name: string): Promise<TenantRecordHead | undefined>;
  catalog(tenant: string): Promise<CatalogSnapshot>;
  providerType(name: string): Promise<PluginSpec | undefined>;
}

export async function openTenancyClient(nc: NatsConnection): Promise<TenancyClient> {
  const [tenants, pluginTypes] = await Promise.all([openTenantReader(nc), openPluginTypeReader(nc)]);
  return {
    tenant: (name) => tenants.live(name),
    catalog: (tenant) => callEndpoint(nc, "tenancy.snapshot", { tenant }),
    providerType: (name) => pluginTypes.get("providertypes", name),
  };
}
