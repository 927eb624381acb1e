/** Reading the node events the clusters service publishes: batches (`node.changes`) and older single events. */
import test from "ava";
import { parseNodeEvents } from "@corral/metrics/testing";

const created = { type: "node.created", tenant: "acme", clusterId: "00000001", nodeId: "n-1", ownerId: "bob", time: 1_700_000_000_999 };
const deleted = { ...created, type: "node.deleted", nodeId: "n-2", time: 1_700_000_100_000 };
const batch = (events: unknown, tenant: unknown = "acme") => ({ type: "node.changes", tenant, events });

test("node events - a single created or deleted event (older history) is read, the ms time floored to seconds", (t) => {
  t.deepEqual(parseNodeEvents(created), {
    events: [{ kind: "created", tenant: "acme", clusterId: "00000001", nodeId: "n-1", ownerId: "bob", timeSeconds: 1_700_000_000 }],
    malformed: 0,
  });
  t.is(parseNodeEvents({ ...created, type: "node.deleted" }).events[0]?.kind, "deleted");
  t.is(parseNodeEvents({ ...created, ownerId: undefined }).events[0]?.ownerId, "");
  t.is(parseNodeEvents({ ...created, time: -5 }).events[0]?.timeSeconds, 0);
});

test("node events - a batch gives each of its events, in order, read as a single event is", (t) => {
  t.deepEqual(parseNodeEvents(batch([created, deleted])), {
    events: [...parseNodeEvents(created).events, ...parseNodeEvents(deleted).events],
    malformed: 0,
  });
  t.deepEqual(parseNodeEvents(batch([])), { events: [], malformed: 0 });
});

test("node events - a batch's malformed elements are counted and its good ones kept", (t) => {
  const parsed = parseNodeEvents(batch([{ ...created, nodeId: "" }, created, "x", { ...deleted, time: "now" }, deleted]));
  t.deepEqual(
    parsed.events.map((e) => `${e.kind} ${e.nodeId}`),
    ["created n-1", "deleted n-2"],
  );
  t.is(parsed.malformed, 3);
  t.deepEqual(parseNodeEvents(batch([created, { ...deleted, tenant: "beta" }])), { ...parseNodeEvents(batch([created])), malformed: 1 }, "another tenant's event in a batch");
  for (const bad of [batch("x"), batch([created], ""), batch([created], 7), { type: "node.changes" }]) {
    t.deepEqual(parseNodeEvents(bad), { events: [], malformed: 1 }, JSON.stringify(bad));
  }
});

test("node events - anything else is one malformed message, not thrown", (t) => {
  for (const bad of [
    null,
    "x",
    42,
    [created],
    { ...created, type: "cluster.status" },
    { ...created, tenant: "" },
    { ...created, clusterId: 7 },
    { ...created, nodeId: undefined },
    { ...created, time: "now" },
    { ...created, time: Number.NaN },
  ]) {
    t.deepEqual(parseNodeEvents(bad), { events: [], malformed: 1 }, JSON.stringify(bad));
  }
});
