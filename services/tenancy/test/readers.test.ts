/**
 * The tenant readers (@corral/shared) against a real nats-server: what other services see of the tenant records
 * tenancy writes (a deletion's tombstone is no tenant to them), and the watched cache the gateway asks on every
 * request.
 */
import type { Tenant, TenantRecordHead } from "@corral/contracts";
import { connectNats, openTenantCache, openTenantReader, silentLogger } from "@corral/shared";
import { openTenantStore, type TenantRecord } from "../src/adapters/tenant-store.js";
import { eventually } from "../../../test/helpers/eventually.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";

const test = testWithNats("tenant-readers-test");

const tenant = (name: string): Tenant => ({ name, workers: 0 });
const tombstone = { since: 1, committed: true, worker: "w", heartbeatAt: 1 };

test("tenant reader - live records, tombstones and names as tenancy stores them", async (t) => {
  const store = await openTenantStore(t.context.nc);
  const reader = await openTenantReader(t.context.nc);
  const catalog = { providers: [], hardwaretypes: [], imagetypes: [], services: [], clustertemplates: [] };
  await store.create({ tenant: tenant("r.live"), uid: "u1", pendingCatalog: { snapshot: catalog, startedAt: 1, token: "x" } });
  await store.create({ tenant: tenant("r_gone"), uid: "u2", deleting: tombstone });

  t.like(await reader.live("r.live"), { tenant: { name: "r.live" }, uid: "u1" });
  t.is(await reader.live("r_gone"), undefined, "a tenant being deleted does not exist");
  t.like((await reader.record("r_gone"))?.value, { deleting: { committed: true } }, "its tombstone is still stored");
  t.is(await reader.record("r.nobody"), undefined);
  const names = await reader.names();
  t.deepEqual(
    names.filter((n) => n.startsWith("r")),
    ["r.live", "r_gone"],
    "names unescaped and sorted, tombstones included",
  );
});

test("tenant cache - follows creates, deletions and removals; a fresh read wins over a lagging watch", async (t) => {
  const { nc } = t.context;
  const cache = await openTenantCache(nc, silentLogger);
  t.teardown(() => cache.stop());
  const writer = await connectNats({ url: t.context.nats.url, name: "tenant-cache-writer" });
  t.teardown(() => writer.close());
  const otherStore = await openTenantStore(writer);

  t.is(cache.cached("c1"), undefined, "unknown before anything is stored");
  t.is(await cache.fresh("c1"), undefined);
  await otherStore.create({ tenant: tenant("c1"), uid: "first" });
  const head = await eventually(() => cache.cached("c1") ?? false, { what: "the watch sees c1" });
  t.deepEqual(head, { tenant: tenant("c1"), uid: "first" }, "only the head is kept");

  await otherStore.modify("c1", (current) => ({ put: { ...(current?.value as TenantRecord), deleting: tombstone } }));
  await eventually(() => cache.cached("c1") === null, { what: "a tenant being deleted is gone from the cache" });
  await otherStore.modify("c1", () => ({ delete: true }));
  await otherStore.create({ tenant: tenant("c1"), uid: "second" });
  // Read at once, before the watch can have delivered the new record to this connection.
  const fresh: TenantRecordHead | undefined = await cache.fresh("c1");
  t.is(fresh?.uid, "second", "a fresh read sees the new tenant of the same name");
  t.is(cache.cached("c1")?.uid, "second", "and the cache keeps it; the older watch events do not put back the deletion");
  await eventually(async () => cache.cached("c1")?.uid === "second", { what: "the watch catches up" });
  t.is(cache.cached("c1")?.uid, "second");
});
