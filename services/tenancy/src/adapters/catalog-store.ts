import type { NatsConnection } from "@nats-io/transport-node";
import { openCatalogMirror, type CatalogMirror } from "./catalog-mirror.js";
import {
  buckets,
  encode,
  keyToken,
  kvKey,
  type CatalogEntity,
  type CatalogKind,
} from "@corral/contracts";
import {
  createValue,
  deleteValue,
  modifyValue,
  openBucket,
  type KV,
  type Logger,
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
  stop(): void;
}

class KvCatalogStore implements CatalogStore {
  constructor(
    private readonly kv: KV,
    private readonly mirror: CatalogMirror,
  ) {}
  get(tenant: string, kind: CatalogKind, name: string) {
    return this.mirror.get(keyToken(tenant), kind, name);
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
  list(tenant: string, kind: CatalogKind) {
    return this.mirror.list(keyToken(tenant), kind);
  }
  names(tenant: string) {
    return this.mirror.names(keyToken(tenant));
  }
  async put(tenant: string, kind: CatalogKind, entity: CatalogEntity) {
    await this.kv.put(kvKey(tenant, kind, entity.name), encode(entity));
  }
  stop() {
    this.mirror.stop();
  }
}

export async function openCatalogStore(nc: NatsConnection, log: Logger): Promise<CatalogStore> {
  const kv = await openBucket(nc, buckets.catalog);
  return new KvCatalogStore(kv, await openCatalogMirror({ nc, kv, bucket: buckets.catalog, log }));
}
