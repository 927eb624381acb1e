/** Reading the node events the clusters service publishes. */
import test from "ava";
import { parseNodeEvent } from "@corral/metrics/testing";

const created = { type: "node.created", tenant: "acme", clusterId: "00000001", nodeId: "n-1", ownerId: "bob", time: 1_700_000_000_999 };

test("node events - a created and a deleted event are read, the ms time floored to seconds", (t) => {
  t.deepEqual(parseNodeEvent(created), {
    kind: "created",
    tenant: "acme",
    clusterId: "00000001",
    nodeId: "n-1",
    ownerId: "bob",
    timeSeconds: 1_700_000_000,
  });
  t.is(parseNodeEvent({ ...created, type: "node.deleted" })?.kind, "deleted");
  t.is(parseNodeEvent({ ...created, ownerId: undefined })?.ownerId, "");
  t.is(parseNodeEvent({ ...created, time: -5 })?.timeSeconds, 0);
});

test("node events - anything else is refused, not thrown", (t) => {
  for (const bad of [
    null,
    "x",
    42,
    { ...created, type: "cluster.status" },
    { ...created, tenant: "" },
    { ...created, clusterId: 7 },
    { ...created, nodeId: undefined },
    { ...created, time: "now" },
    { ...created, time: Number.NaN },
  ]) {
    t.is(parseNodeEvent(bad), undefined, JSON.stringify(bad));
  }
});
