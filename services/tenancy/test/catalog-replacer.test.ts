import { buckets, decode, encode, kvKey, type CatalogSnapshot } from "@corral/contracts";
import { openBucket, silentLogger } from "@corral/shared";
import { startTenancyService } from "../src/service.js";
import { openCatalogStore } from "../src/adapters/catalog-store.js";
import { eventually } from "../../../test/helpers/eventually.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";

const test = testWithNats("replacer-test");

const snapshot = (names: string[]): CatalogSnapshot => ({
  providers: [],
  hardwaretypes: names.map((name) => ({ name, providermap: { p: { flavor: "f" } } })),
  imagetypes: [],
  services: [],
  clustertemplates: [],
});

// A tenancy process killed between recording an import and finishing it leaves the mark on the tenant
// record and a half-applied catalog; the next instance must finish it exactly.
test("catalog replacement - an interrupted import is finished by another instance", async (t) => {
  const { nc } = t.context;
  const catalog = await openCatalogStore(nc, silentLogger);
  t.teardown(() => catalog.stop());
  const tenants = await openBucket(nc, buckets.tenants);
  // State as a crash would leave it: old entity "old" still there, one of the new ones written.
  await catalog.put("acme", "hardwaretypes", { name: "old", providermap: {} });
  await catalog.put("acme", "hardwaretypes", { name: "new-1", providermap: { p: { flavor: "f" } } });
  await tenants.put(
    kvKey("acme"),
    encode({
      tenant: { name: "acme", workers: 0 },
      pendingCatalog: { snapshot: snapshot(["new-1", "new-2"]), startedAt: 0, token: "dead-writer" },
    }),
  );
  const service = await startTenancyService({ nc, log: silentLogger, reconcileIntervalMs: 100, takeoverAfterMs: 50 });
  t.teardown(() => service.stop());
  await eventually(async () => (await catalog.list("acme", "hardwaretypes")).map((e) => e.name).join(",") === "new-1,new-2", {
    timeoutMs: 10000,
    what: "the interrupted import to be finished",
  });
  await eventually(async () => {
    const e = await tenants.get(kvKey("acme"));
    return e !== null && (decode(e.value) as { pendingCatalog?: unknown }).pendingCatalog === undefined;
  }, { timeoutMs: 10000, what: "the mark to be cleared" });
  t.pass();
});
