import anyTest, { type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { startNats, type NatsHandle } from "@corral/deploy";
import { connectNats } from "../src/nats.js";
import { createValue, modifyValue, openBucket, readValue } from "../src/kv.js";

const test = anyTest as TestFn<{ nats: NatsHandle; nc: NatsConnection }>;
test.before(async (t) => {
  t.context.nats = await startNats({ jetstream: true, syncAlways: false });
  t.context.nc = await connectNats({ url: t.context.nats.url, name: "kv-test" });
});
test.after.always(async (t) => {
  await t.context.nc?.drain();
  await t.context.nats?.stop();
});

test("kv - concurrent read-modify-writes lose no update", async (t) => {
  const kv = await openBucket(t.context.nc, "kv_test_counter");
  const writers = 25;
  await Promise.all(
    Array.from({ length: writers }, () =>
      modifyValue<number>(kv, "n", (cur) => ({ put: (cur?.value ?? 0) + 1 }), { maxAttempts: 100 }),
    ),
  );
  t.is((await readValue<number>(kv, "n"))?.value, writers);
});

test("kv - create succeeds for exactly one of many concurrent writers", async (t) => {
  const kv = await openBucket(t.context.nc, "kv_test_create");
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => createValue(kv, "k", { i })));
  t.is(results.filter((r) => r !== undefined).length, 1);
});

test("kv - a modify that throws writes nothing", async (t) => {
  const kv = await openBucket(t.context.nc, "kv_test_abort");
  await createValue(kv, "k", 1);
  await t.throwsAsync(
    modifyValue<number>(kv, "k", () => {
      throw new Error("no");
    }),
  );
  t.is((await readValue<number>(kv, "k"))?.value, 1);
});

test("kv - modify can delete and keep", async (t) => {
  const kv = await openBucket(t.context.nc, "kv_test_delete");
  await createValue(kv, "k", 1);
  await modifyValue<number>(kv, "k", () => ({ keep: true }));
  t.is((await readValue<number>(kv, "k"))?.value, 1);
  await modifyValue<number>(kv, "k", () => ({ delete: true }));
  t.is(await readValue<number>(kv, "k"), undefined);
  t.not(await createValue(kv, "k", 2), undefined, "a deleted key can be created again");
});
