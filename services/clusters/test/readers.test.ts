/** `@corral/clusters/readers` against a real nats-server: tenancy sees the usage the clusters service counts. */
import { openUsageReader } from "@corral/clusters/readers";
import { openUsageStore } from "../src/adapters/usage-store.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";

const test = testWithNats("clusters-readers-test");

test("usage reader - what reservations and releases leave, zero for a tenant without clusters", async (t) => {
  const store = await openUsageStore(t.context.nc);
  const reader = await openUsageReader(t.context.nc);
  t.deepEqual(await reader.get("u.acme"), { clusters: 0, nodes: 0 });
  const acme = { name: "u.acme", workers: 0, maxClusters: 5, maxNodes: 10 };
  await Promise.all([store.reserve(acme, 3), store.reserve(acme, 4)]);
  t.deepEqual(await reader.get("u.acme"), { clusters: 2, nodes: 7 });
  await store.release("u.acme", 3);
  t.deepEqual(await reader.get("u.acme"), { clusters: 1, nodes: 4 });
  await store.remove("u.acme");
  t.deepEqual(await reader.get("u.acme"), { clusters: 0, nodes: 0 }, "a deleted tenant's usage is forgotten");
});
