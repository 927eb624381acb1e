import { createValue, modifyValue, openBucket, putValue, readValue, RevisionCache } from "../src/kv.js";
import { JsApiError, jsRequests } from "../src/js-requests.js";
import { encode } from "@corral/contracts";
import { testWithNats } from "../../test/helpers/nats-test.js";

const test = testWithNats("kv-test");

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

test("kv - two processes' caches: a stale guess loses the compare-and-set, then the fresh value decides", async (t) => {
  const kv = await openBucket(t.context.nc, "kv_test_cache");
  const mine = new RevisionCache();
  const theirs = new RevisionCache();
  await putValue(kv, "k", { n: 1, seen: [] as string[] }, mine);
  // Another process writes twice; my cache still holds revision 1.
  await modifyValue<{ n: number; seen: string[] }>(kv, "k", (c) => ({ put: { n: c!.value.n + 1, seen: [...c!.value.seen, "a"] } }), { cache: theirs });
  await modifyValue<{ n: number; seen: string[] }>(kv, "k", (c) => ({ put: { n: c!.value.n + 1, seen: [...c!.value.seen, "b"] } }), { cache: theirs });
  const calls: number[] = [];
  const out = await modifyValue<{ n: number; seen: string[] }>(
    kv,
    "k",
    (c) => {
      calls.push(c!.value.n);
      return { put: { n: c!.value.n + 1, seen: [...c!.value.seen, "c"] } };
    },
    { cache: mine },
  );
  t.deepEqual(calls, [1, 3], "tried on the cached revision, then on the one read");
  t.deepEqual(out.value, { n: 4, seen: ["a", "b", "c"] });
  t.deepEqual((await readValue(kv, "k"))?.value, { n: 4, seen: ["a", "b", "c"] });
  // Now the cache is current: the next modify needs no read and is decided once.
  calls.length = 0;
  await modifyValue<{ n: number; seen: string[] }>(kv, "k", (c) => (calls.push(c!.value.n), { put: { ...c!.value, n: c!.value.n + 1 } }), { cache: mine });
  t.deepEqual(calls, [4]);
});

test("kv - keep or throw decided on a cached value is decided again on a fresh read", async (t) => {
  const kv = await openBucket(t.context.nc, "kv_test_cache_keep");
  const mine = new RevisionCache();
  await putValue(kv, "k", 1, mine);
  await putValue(kv, "k", 2); // another writer; my cache says 1
  const keepSeen: number[] = [];
  await modifyValue<number>(kv, "k", (c) => (keepSeen.push(c!.value), c!.value === 1 ? { keep: true } : { put: c!.value * 10 }), { cache: mine });
  t.deepEqual(keepSeen, [1, 2]);
  t.is((await readValue<number>(kv, "k"))?.value, 20);
  await putValue(kv, "k", 5); // my cache says 20
  const throwSeen: number[] = [];
  await modifyValue<number>(
    kv,
    "k",
    (c) => {
      throwSeen.push(c!.value);
      if (c!.value === 20) throw new Error("stale");
      return { put: c!.value + 1 };
    },
    { cache: mine },
  );
  t.deepEqual(throwSeen, [20, 5]);
  t.is((await readValue<number>(kv, "k"))?.value, 6);
});

test("kv - values handed out from a cache are copies", async (t) => {
  const kv = await openBucket(t.context.nc, "kv_test_cache_copy");
  const cache = new RevisionCache();
  await putValue(kv, "k", { list: [1] }, cache);
  const a = cache.peek<{ list: number[] }>("k");
  a!.value.list.push(2);
  t.deepEqual(cache.peek<{ list: number[] }>("k")?.value, { list: [1] });
});

test("js requests - acknowledged publish, deduplication, compare-and-set error codes and direct get", async (t) => {
  const kv = await openBucket(t.context.nc, "kv_test_lean");
  const js = jsRequests(t.context.nc);
  const first = await js.publish("$KV.kv_test_lean.a", new Uint8Array([1]), { expectLastSubjectSequence: 0 });
  const err = await t.throwsAsync(js.publish("$KV.kv_test_lean.a", new Uint8Array([2]), { expectLastSubjectSequence: 0 }));
  t.true(err instanceof JsApiError && err.code === 10071, "a lost compare-and-set carries JetStream's code");
  const once = await js.publish("$KV.kv_test_lean.d", new Uint8Array([1]), { msgId: "m1" });
  t.is(await js.publish("$KV.kv_test_lean.d", new Uint8Array([1]), { msgId: "m1" }), once, "a repeated message id is a duplicate");
  const got = await js.lastBySubject("KV_kv_test_lean", "$KV.kv_test_lean.a");
  t.is(got?.seq, first);
  t.deepEqual([...(got?.data ?? [])], [1]);
  t.is(await js.lastBySubject("KV_kv_test_lean", "$KV.kv_test_lean.none"), undefined);
  await kv.delete("a");
  t.is(await readValue(kv, "a"), undefined, "a delete marker reads as absent");
  t.not(await createValue(kv, "a", 3), undefined, "and can be created over");
  const noStream = await t.throwsAsync(js.publish("nowhere.at.all", new Uint8Array([1])));
  t.like(noStream, { status: 503, code: "service_unavailable" }, "no stream listening: a 503 for the caller");
});

test("kv - a revision cache holds copies and stays within its byte bound, least recently used out first", (t) => {
  const cache = new RevisionCache(100, 1_000);
  const bytes = encode({ list: [1, 2, 3] });
  cache.remember("v", bytes, 1);
  bytes.fill(0); // the caller's buffer is reused: the cache kept its own copy
  t.deepEqual(cache.peek("v")?.value, { list: [1, 2, 3] });
  cache.forget("v");
  for (const key of ["a", "b", "c", "d"]) cache.remember(key, new Uint8Array(250), 1);
  t.is(cache.size, 1_000);
  cache.remember("e", new Uint8Array(250), 1); // over 1,000 bytes: "a", least recently used, goes
  t.is(cache.size, 1_000);
  t.false(cache.has("a"));
  t.true(["b", "c", "d", "e"].every((k) => cache.has(k)));
  cache.remember("f", new Uint8Array(600), 1); // more than a quarter of the bound: not kept at all
  t.false(cache.has("f"));
  cache.remember("b", new Uint8Array(10), 0);
  t.is(cache.size, 1_000, "an older revision than the one held changes nothing");
});
