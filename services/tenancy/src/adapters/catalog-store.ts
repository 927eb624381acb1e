import type { NatsConnection } from "@nats-io/transport-node";
import {
  buckets,
  createValue,
  deleteValue,
  encode,
  fromKeyToken,
  keyToken,
  kvKey,
  listKeys,
  listValues,
  modifyValue,
  openBucket,
  readValue,
  type CatalogEntity,
  type CatalogKind,
  type KV,
  type Modification,
  type Versioned,
} from "@corral/shared";

/** Catalog entities of every tenant, one KV key per entity: `<tenant>.<kind>.<name>`. */
export interface CatalogStore {
  get(tenant: string, kind: CatalogKind, name: string): Promise<Versioned<CatalogEntity> | undefined>;
  /** False when the name is taken. */
  create(tenant: string, kind: CatalogKind, entity: CatalogEntity): Promise<boolean>;
  modify(
    tenant: string,
    kind: CatalogKind,
    name: string,
    fn: (current: Versioned<CatalogEntity> | undefined) => Modification<CatalogEntity>,
  ): Promise<CatalogEntity | undefined>;
  remove(tenant: string, kind: CatalogKind, name: string, revision?: number): Promise<boolean>;
  /** Every entity of one kind, sorted by name. */
  list(tenant: string, kind: CatalogKind): Promise<CatalogEntity[]>;
  /** Names of every stored entity of the tenant, by kind. */
  names(tenant: string): Promise<Array<{ kind: CatalogKind; name: string }>>;
  /** Unconditional write (catalog replacement). */
  put(tenant: string, kind: CatalogKind, entity: CatalogEntity): Promise<void>;
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

class KvCatalogStore implements CatalogStore {
  constructor(private readonly kv: KV) {}
  get(tenant: string, kind: CatalogKind, name: string) {
    return readValue<CatalogEntity>(this.kv, kvKey(tenant, kind, name));
  }
  async create(tenant: string, kind: CatalogKind, entity: CatalogEntity) {
    return (await createValue(this.kv, kvKey(tenant, kind, entity.name), entity)) !== undefined;
  }
  async modify(
    tenant: string,
    kind: CatalogKind,
    name: string,
    fn: (current: Versioned<CatalogEntity> | undefined) => Modification<CatalogEntity>,
  ) {
    return (await modifyValue<CatalogEntity>(this.kv, kvKey(tenant, kind, name), fn)).value;
  }
  remove(tenant: string, kind: CatalogKind, name: string, revision?: number) {
    return deleteValue(this.kv, kvKey(tenant, kind, name), revision);
  }
  async list(tenant: string, kind: CatalogKind) {
    const entries = await listValues<CatalogEntity>(this.kv, `${keyToken(tenant)}.${kind}.*`);
    return entries.map((e) => e.value).sort(byName);
  }
  async names(tenant: string) {
    const keys = await listKeys(this.kv, `${keyToken(tenant)}.>`);
    return keys.map((k) => {
      const [, kind, name] = k.split(".");
      return { kind: kind as CatalogKind, name: fromKeyToken(name ?? "") };
    });
  }
  async put(tenant: string, kind: CatalogKind, entity: CatalogEntity) {
    await this.kv.put(kvKey(tenant, kind, entity.name), encode(entity));
  }
}

export async function openCatalogStore(nc: NatsConnection): Promise<CatalogStore> {
  return new KvCatalogStore(await openBucket(nc, buckets.catalog));
}
