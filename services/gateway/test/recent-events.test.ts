/** RecentEvents: answers a replay from memory only when it holds every event the replay needs. */
import test from "ava";
import { encode, type ClusterStreamEvent } from "@corral/contracts";
import { RecentEvents, StreamedEvent } from "@corral/gateway/testing";

const status = (id: number, clusterId: string, first: boolean) =>
  new StreamedEvent(id, {
    type: "cluster.status",
    tenant: "t",
    clusterId,
    at: 0,
    status: "pending",
    ...(first ? {} : { previous: "active" }),
    action: "cluster_create",
    planId: `${clusterId}-001`,
    progress: { stepstotal: 0, stepscompleted: 0 },
  } as ClusterStreamEvent);
const ids = (events: StreamedEvent[] | undefined) => events?.map((e) => e.id);

test("a cluster seen from its first event is answered from the start; one seen midway only after the first sequence received", (t) => {
  const recent = new RecentEvents(100);
  recent.add("old", status(10, "old", false));
  recent.add("new", status(11, "new", true));
  recent.add("old", status(12, "old", false));
  t.deepEqual(ids(recent.after("new", 0)), [11], "a new cluster's whole history is held");
  t.is(recent.after("old", 0), undefined, "an older cluster's events before sequence 10 are not");
  t.deepEqual(ids(recent.after("old", 9)), [10, 12]);
  t.deepEqual(ids(recent.after("old", 10)), [12]);
  t.is(recent.after("unknown", 50), undefined);
  recent.clear();
  t.is(recent.after("new", 0), undefined, "after a reconnection nothing is trusted");
});

test("bounds: a cluster's oldest events and whole clusters are dropped, and replays that needed them go to the stream", (t) => {
  const recent = new RecentEvents(4, 3);
  recent.add("a", status(1, "a", true));
  recent.add("a", status(2, "a", false));
  recent.add("a", status(3, "a", false));
  recent.add("a", status(4, "a", false));
  t.is(recent.after("a", 0), undefined, "event 1 was dropped");
  t.deepEqual(ids(recent.after("a", 1)), [2, 3, 4]);
  recent.add("b", status(5, "b", true));
  recent.add("b", status(6, "b", false));
  t.is(recent.after("a", 1), undefined, "cluster a was dropped whole");
  recent.add("a", status(7, "a", false));
  t.is(recent.after("a", 3), undefined, "a's event 4 was dropped with it");
  t.deepEqual(ids(recent.after("a", 4)), [7], "everything after the dropped events was received");
  t.deepEqual(ids(recent.after("b", 0)), [5, 6], "b is held from its first event");
});

test("an event made from its msgpack bytes decodes on first use; one that does not decode is never replayed", (t) => {
  const event = status(1, "c", true).event;
  const fromBytes = new StreamedEvent(1, encode(event));
  t.deepEqual(JSON.parse(fromBytes.eventJson), event);
  t.true(fromBytes.decodes());
  const broken = new StreamedEvent(2, new Uint8Array([0x82, 0xa4, 0x74]));
  t.false(broken.decodes());
  t.throws(() => broken.event);

  const recent = new RecentEvents(100);
  t.false(recent.holds("c"));
  recent.add("c", fromBytes);
  t.true(recent.holds("c"), "later events of c are added without being read");
  recent.add("c", broken);
  recent.add("c", new StreamedEvent(3, encode({ ...event, previous: "pending" })));
  t.deepEqual(ids(recent.after("c", 0)), [1, 3]);
});
