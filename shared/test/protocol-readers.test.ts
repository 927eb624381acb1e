/**
 * The readers of the documented provisioner protocol (shared/src: cluster-records, plugin-types, active-sets,
 * assignments) against a real nats-server, each fed by writes as its owner makes them.
 */
import {
  ASSIGNMENT_KEY,
  buckets,
  encode,
  isTerminatedCluster,
  kvKey,
  pluginTypeKey,
} from "@corral/contracts";
import {
  openActiveSetReader,
  openAssignmentReader,
  openBucket,
  openClusterRecordReader,
  openPluginTypeReader,
  putValue,
} from "../src/index.js";
import { eventually } from "../../test/helpers/eventually.js";
import { testWithNats } from "../../test/helpers/nats-test.js";

const test = testWithNats("protocol-readers-test");

test("cluster records - a provisioner reads tenant and status of what the clusters service stored", async (t) => {
  const kv = await openBucket(t.context.nc, buckets.clusters);
  await putValue(kv, kvKey("00000001"), { id: "00000001", tenant: "acme", status: "active", name: "c", actor: { value: "active", context: {} } });
  await putValue(kv, kvKey("00000002"), { id: "00000002", tenant: "acme", status: "terminated", actor: { value: "terminated", context: {} } });
  // Written before records had a status: live to a reader, whatever its actor says.
  await putValue(kv, kvKey("00000004"), { id: "00000004", tenant: "acme", actor: { value: "terminated", context: {} } });
  const reader = await openClusterRecordReader(t.context.nc);
  const live = await reader.get("00000001");
  t.deepEqual(live, { tenant: "acme", status: "active" }, "the head alone, never the actor's state");
  t.false(isTerminatedCluster(live!));
  t.true(isTerminatedCluster((await reader.get("00000002"))!));
  t.deepEqual(await reader.get("00000004"), { tenant: "acme" });
  t.false(isTerminatedCluster((await reader.get("00000004"))!));
  t.is(await reader.get("00000003"), undefined);
  t.is((await kv.status()).history, 5, "opened with the clusters service's settings");
});

test("plugin types - one kind, in name order, as provisioners announce them", async (t) => {
  const kv = await openBucket(t.context.nc, buckets.pluginTypes);
  const spec = (name: string) => ({ name, parameters: {}, resourceTypes: {} });
  await putValue(kv, pluginTypeKey("providertypes", "zeta"), spec("zeta"));
  await putValue(kv, pluginTypeKey("providertypes", "a.b"), spec("a.b"));
  await putValue(kv, pluginTypeKey("automatortypes", "shell"), spec("shell"));
  const reader = await openPluginTypeReader(t.context.nc);
  t.deepEqual((await reader.list("providertypes")).map((s) => s.name), ["a.b", "zeta"]);
  t.deepEqual((await reader.list("automatortypes")).map((s) => s.name), ["shell"]);
  t.is((await reader.get("providertypes", "a.b"))?.name, "a.b");
  t.is(await reader.get("automatortypes", "zeta"), undefined, "kinds are apart");
});

test("active sets - a tenant's published set, and which tenants' sets change", async (t) => {
  const kv = await openBucket(t.context.nc, buckets.pluginActive);
  await putValue(kv, kvKey("t.one"), { tenant: "t.one", generation: 1, publishedAt: 1, automatortypes: {}, providertypes: {} });
  const reader = await openActiveSetReader(t.context.nc);
  t.like(await reader.get("t.one"), { tenant: "t.one", generation: 1 });
  t.is(await reader.get("t.none"), undefined);

  const changes = await reader.watch();
  const seen: string[] = [];
  const watching = (async () => {
    for await (const tenant of changes.items) seen.push(tenant);
  })();
  await eventually(() => seen.includes("t.one"), { what: "the stored set is reported first" });
  await putValue(kv, kvKey("t_two"), { tenant: "t_two", generation: 1, publishedAt: 2, automatortypes: {}, providertypes: {} });
  await kv.purge(kvKey("t.one"));
  await eventually(() => seen.filter((x) => x === "t.one").length === 2 && seen.includes("t_two"), { what: "a new set and a purge" });
  t.is(await reader.get("t.one"), undefined, "a purged set is none");
  changes.stop();
  await watching;
  t.pass("the watch ends when stopped");
});

test("assignments - the encoded assignment now and after each change", async (t) => {
  const reader = await openAssignmentReader(t.context.nc);
  t.is(await reader.get(), undefined, "none before the balancer wrote one");
  const kv = await openBucket(t.context.nc, buckets.assignments);
  const changes = await reader.watch();
  const values: Array<Uint8Array | undefined> = [];
  const watching = (async () => {
    for await (const value of changes.items) values.push(value);
  })();
  const first = encode({ p1: { acme: 2 } });
  await kv.put(ASSIGNMENT_KEY, first);
  t.deepEqual(await reader.get(), first);
  await eventually(() => values.length >= 1, { what: "the write is watched" });
  await kv.delete(ASSIGNMENT_KEY);
  await eventually(() => values.length >= 2, { what: "the removal is watched" });
  t.deepEqual(values, [first, undefined]);
  changes.stop();
  await watching;
});
