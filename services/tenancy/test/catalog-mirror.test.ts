/**
 * The catalog store's reads come from a watched mirror: they must still see every write acknowledged before they
 * were asked, by any connection (another tenancy instance), while concurrent reads share one sequence read.
 */
import { buckets, encode, kvKey, kvStream, type CatalogEntity } from "@corral/contracts";
import { connectNats, openBucket, silentLogger } from "@corral/shared";
import { openCatalogMirror } from "../src/adapters/catalog-mirror.js";
import { openCatalogStore } from "../src/adapters/catalog-store.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";

const test = testWithNats("catalog-mirror-test");

const hardware = (name: string, flavor: string): CatalogEntity => ({ name, providermap: { p: { flavor } } });

test("catalog mirror - get and list see every write another connection had acknowledged before the read", async (t) => {
  const { nc, nats } = t.context;
  const catalog = await openCatalogStore(nc, silentLogger);
  t.teardown(() => catalog.stop());
  const writer = await connectNats({ url: nats.url, name: "other-instance" });
  t.teardown(() => writer.close());
  const otherKv = await openBucket(writer, buckets.catalog);
  for (let i = 0; i < 100; i++) {
    const name = `hw.${i % 7}`; // a dot: keys and names are escaped both ways
    if (i % 5 === 4) {
      await otherKv.delete(kvKey("acme", "hardwaretypes", name));
      t.is(await catalog.get("acme", "hardwaretypes", name), undefined, `get after delete ${i}`);
      t.false((await catalog.list("acme", "hardwaretypes")).some((e) => e.name === name), `list after delete ${i}`);
      continue;
    }
    const revision = await otherKv.put(kvKey("acme", "hardwaretypes", name), encode(hardware(name, `f${i}`)));
    t.deepEqual(await catalog.get("acme", "hardwaretypes", name), { value: hardware(name, `f${i}`), revision }, `get after write ${i}`);
    const listed = (await catalog.list("acme", "hardwaretypes")).find((e) => e.name === name);
    t.deepEqual(listed, hardware(name, `f${i}`), `list after write ${i}`);
  }
  t.is(await catalog.get("acme", "hardwaretypes", "never"), undefined);
  t.is(await catalog.get("other", "hardwaretypes", "hw.1"), undefined, "another tenant's name is not this one's");
});

test("catalog mirror - concurrent reads share one small question to the bucket", async (t) => {
  const { nc, nats } = t.context;
  const bucket = "catalog_mirror_test"; // its own: the other test's reads go to the catalog bucket meanwhile
  const kv = await openBucket(nc, bucket);
  await kv.put(kvKey("shared", "hardwaretypes", "a"), encode(hardware("a", "f")));
  const mirror = await openCatalogMirror({ nc, kv, bucket, log: silentLogger });
  t.teardown(() => mirror.stop());
  t.is((await mirror.get("shared", "hardwaretypes", "a"))?.value.name, "a");

  // What the mirror asks JetStream, seen by a plain subscriber on another connection.
  const observer = await connectNats({ url: nats.url, name: "observer" });
  t.teardown(() => observer.close());
  const asked = { directGets: 0, streamInfos: 0 };
  observer.subscribe(`$JS.API.DIRECT.GET.${kvStream(bucket)}`, { callback: () => void asked.directGets++ });
  observer.subscribe(`$JS.API.STREAM.INFO.${kvStream(bucket)}`, { callback: () => void asked.streamInfos++ });
  await observer.flush();

  const reads = await Promise.all(Array.from({ length: 50 }, () => mirror.get("shared", "hardwaretypes", "a")));
  t.true(reads.every((r) => r?.value.name === "a"));
  await observer.flush();
  t.deepEqual(asked, { directGets: 1, streamInfos: 0 }, "reads of one turn share one question");

  // Reads in later turns, while that question is in flight, share the next one.
  asked.directGets = 0;
  const first = mirror.get("shared", "hardwaretypes", "a");
  await new Promise((resolve) => setImmediate(resolve));
  const later = Array.from({ length: 20 }, () => mirror.get("shared", "hardwaretypes", "a"));
  await Promise.all([first, ...later]);
  await observer.flush();
  t.true(asked.directGets <= 2, `at most two questions, asked ${asked.directGets}`);
});
