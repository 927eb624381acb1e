import type { NatsConnection } from "@nats-io/transport-node";
import {
  buckets,
  kvKey,
  type CatalogSnapshot,
  type TenantRecordHead,
} from "@corral/contracts";
import {
  createValue,
  listValues,
  modifyValue,
  openBucket,
  readValue,
  type KV,
  type Modification,
  type Versioned,
} from "@corral/shared";

/** A catalog replacement that has been decided but maybe not fully applied (import, bootstrap). */
export interface PendingCatalog {
  snapshot: CatalogSnapshot;
  /** ms; a pending replacement older than the takeover age is finished by any instance. */
  startedAt: number;
  /** Identifies the writer so only it (or a takeover) clears the mark. */
  token: string;
}

/** What the tenants bucket holds per tenant: what every service reads, and tenancy's own marks. */
export interface TenantRecord extends TenantRecordHead {
  pendingCatalog?: PendingCatalog;
}

/** Tenant records in KV. */
export interface TenantStore {
  get(name: string): Promise<Versioned<TenantRecord> | undefined>;
  /** False when the name is taken. */
  create(record: TenantRecord): Promise<boolean>;
  modify(
    name: string,
    fn: (current: Versioned<TenantRecord> | undefined) => Modification<TenantRecord>,
  ): Promise<TenantRecord | undefined>;
  list(): Promise<TenantRecord[]>;
}

class KvTenantStore implements TenantStore {
  constructor(private readonly kv: KV) {}
  get(name: string) {
    return readValue<TenantRecord>(this.kv, kvKey(name));
  }
  async create(record: TenantRecord) {
    return (await createValue(this.kv, kvKey(record.tenant.name), record)) !== undefined;
  }
  async modify(name: string, fn: (current: Versioned<TenantRecord> | undefined) => Modification<TenantRecord>) {
    return (await modifyValue<TenantRecord>(this.kv, kvKey(name), fn)).value;
  }
  async list() {
    return (await listValues<TenantRecord>(this.kv)).map((e) => e.value);
  }
}

export async function openTenantStore(nc: NatsConnection): Promise<TenantStore> {
  return new KvTenantStore(await openBucket(nc, buckets.tenants));
}
