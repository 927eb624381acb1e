import type { KV } from "@corral/shared";
import { decode, fromKeyToken, type CatalogEntity, type CatalogKind, type Logger } from "@corral/shared";

/**
 * An in-memory copy of the catalog bucket, fed by a KV watch. Lists read it instead of opening a
 * consumer per request (~15x faster). Reads stay linearizable: before answering, the mirror waits until it
 * has applied everything up to the bucket's last sequence at the time of the read, so a write acknowledged
 * by any instance is visible to the next list on every instance.
 */
export interface CatalogMirror {
  /** Entities of one kind for a tenant, once caught up. */
  list(tenantToken: string, kind: CatalogKind): Promise<CatalogEntity[]>;
  /** Every `{kind, name}` of a tenant, once caught up. */
  names(tenantToken: string): Promise<Array<{ kind: CatalogKind; name: string }>>;
  stop(): void;
}

type TenantEntries = Map<CatalogKind, Map<string, CatalogEntity>>;

export async function openCatalogMirror(kv: KV, log: Logger): Promise<CatalogMirror> {
  const tenants = new Map<string, TenantEntries>();
  let appliedRevision = 0;
  const waiters: Array<{ revision: number; resolve: () => void }> = [];

  const apply = (key: string, operation: string, value: Uint8Array, revision: number) => {
    const [tenant, kind, nameToken] = key.split(".");
    if (tenant && kind && nameToken) {
      const name = fromKeyToken(nameToken);
      let byKind = tenants.get(tenant);
      if (!byKind) tenants.set(tenant, (byKind = new Map()));
      let entries = byKind.get(kind as CatalogKind);
      if (!entries) byKind.set(kind as CatalogKind, (entries = new Map()));
      if (operation === "PUT") entries.set(name, decode<CatalogEntity>(value));
      else entries.delete(name);
    }
    appliedRevision = Math.max(appliedRevision, revision);
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i];
      if (w && w.revision <= appliedRevision) {
        waiters.splice(i, 1);
        w.resolve();
      }
    }
  };

  const watcher = await kv.watch({ key: ">" });
  void (async () => {
    for await (const e of watcher) apply(e.key, e.operation, e.value, e.revision);
  })().catch((err: unknown) => log.error("catalog watch ended", { err }));

  const caughtUp = async (): Promise<void> => {
    const status = await kv.status();
    const target = status.streamInfo.state.last_seq;
    if (target <= appliedRevision) return;
    await new Promise<void>((resolve) => waiters.push({ revision: target, resolve }));
  };

  const byName = (a: CatalogEntity, b: CatalogEntity) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

  return {
    async list(tenantToken, kind) {
      await caughtUp();
      return [...(tenants.get(tenantToken)?.get(kind)?.values() ?? [])].sort(byName);
    },
    async names(tenantToken) {
      await caughtUp();
      const out: Array<{ kind: CatalogKind; name: string }> = [];
      for (const [kind, entries] of tenants.get(tenantToken) ?? []) {
        for (const name of entries.keys()) out.push({ kind, name });
      }
      return out;
    },
    stop() {
      watcher.stop();
    },
  };
}
