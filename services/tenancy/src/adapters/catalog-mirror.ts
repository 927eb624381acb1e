import type { NatsConnection } from "@nats-io/transport-node";
import { decode, fromKeyToken, kvStream, kvSubjectPrefix, type CatalogEntity, type CatalogKind } from "@corral/contracts";
import { jsRequests, type KV, type Logger, type Versioned } from "@corral/shared";
import { freshReads } from "./fresh-reads.js";

/**
 * An in-memory copy of the catalog bucket, fed by a KV watch. Reads use it instead of a JetStream request each
 * (lists opened a consumer per request, ~15x slower; a get was a direct get per request). Reads stay
 * linearizable: before answering, the mirror makes sure, by asking the bucket after the request came in, that it
 * has applied every message the bucket holds, so a write acknowledged by any instance is visible to the next read
 * on every instance. The question is a direct get of the first message past the last one applied: when there is
 * none (the usual answer) the mirror is current; otherwise it waits for the bucket's last sequence. Concurrent
 * reads share that question (fresh-reads.ts): one small JetStream request per round trip, not per read.
 */
export interface CatalogMirror {
  /** One entity and its revision, once caught up; undefined when absent. */
  get(tenantToken: string, kind: CatalogKind, name: string): Promise<Versioned<CatalogEntity> | undefined>;
  /** Entities of one kind for a tenant, once caught up. */
  list(tenantToken: string, kind: CatalogKind): Promise<CatalogEntity[]>;
  /** Every `{kind, name}` of a tenant, once caught up. */
  names(tenantToken: string): Promise<Array<{ kind: CatalogKind; name: string }>>;
  stop(): void;
}

/**
 * Least time between two questions to the bucket: under load they cost tenancy and nats-server about as much as
 * the reads themselves, and reads that come one at a time would each ask. A read waits at most this much more.
 */
const QUESTION_INTERVAL_MS = 1;

type TenantEntries = Map<CatalogKind, Map<string, Versioned<CatalogEntity>>>;

export interface CatalogMirrorDeps {
  nc: NatsConnection;
  /** The catalog bucket, and its name. */
  kv: KV;
  bucket: string;
  log: Logger;
}

export async function openCatalogMirror({ nc, kv, bucket, log }: CatalogMirrorDeps): Promise<CatalogMirror> {
  const tenants = new Map<string, TenantEntries>();
  /** Each tenant's entities of a kind sorted by name (key `tenant.kind`), built by the first list after a change. */
  const sortedLists = new Map<string, CatalogEntity[]>();
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
      if (operation === "PUT") entries.set(name, { value: decode<CatalogEntity>(value), revision });
      else entries.delete(name);
      sortedLists.delete(`${tenant}.${kind}`);
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

  const js = jsRequests(nc);
  /** Whether the bucket holds a message the mirror has not applied (asked after every caller asked). */
  const holdsUnapplied = freshReads(
    async () => (await js.nextBySubject(kvStream(bucket), `${kvSubjectPrefix(bucket)}>`, appliedRevision + 1)) !== undefined,
    { minIntervalMs: QUESTION_INTERVAL_MS },
  );
  const lastSequence = freshReads(async () => (await kv.status()).streamInfo.state.last_seq);
  const caughtUp = async (): Promise<void> => {
    if (!(await holdsUnapplied())) return;
    const target = await lastSequence();
    if (target <= appliedRevision) return;
    await new Promise<void>((resolve) => waiters.push({ revision: target, resolve }));
  };

  const byName = (a: CatalogEntity, b: CatalogEntity) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

  return {
    async get(tenantToken, kind, name) {
      await caughtUp();
      return tenants.get(tenantToken)?.get(kind)?.get(name);
    },
    async list(tenantToken, kind) {
      await caughtUp();
      const listKey = `${tenantToken}.${kind}`;
      let sorted = sortedLists.get(listKey);
      if (!sorted) {
        sorted = [...(tenants.get(tenantToken)?.get(kind)?.values() ?? [])].map((e) => e.value).sort(byName);
        sortedLists.set(listKey, sorted);
      }
      return sorted.slice();
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
