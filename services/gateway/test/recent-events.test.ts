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
  t.deepEqual(fromBytes.events, [event]);
  t.is(fromBytes.sseFrame, `id: 1\nevent: cluster.status\ndata: ${JSON.stringify(event)}\n\n`);
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

test("a stored plan.progress holding task ends reaches clients as each task.ended, then the progress without them, under its id", (t) => {
  const base = { tenant: "t", clusterId: "c", at: 5, planId: "c-001" };
  const ended = (n: number): ClusterStreamEvent => ({
    ...base,
    type: "task.ended",
    taskId: `c-001-${n}`,
    taskName: "CONFIRM",
    nodeId: `n${n}`,
    service: "",
    attempt: 1,
    ok: true,
    status: 0,
    startTime: 1,
    durationMs: 2,
    resultAt: 3,
  });
  const progress = { ...base, type: "plan.progress", stage: 1, stepscompleted: 4, stepstotal: 6 } as const;
  const stored = new StreamedEvent(9, encode({ ...progress, tasksEnded: [ended(1), ended(2)] }));
  t.deepEqual(stored.events, [ended(1), ended(2), progress], "the field itself never reaches a client");
  t.deepEqual(
    stored.sseFrame.split("\n\n").filter(Boolean).map((frame) => frame.split("\n").slice(0, -1).join(" ")),
    ["event: task.ended", "event: task.ended", "id: 9 event: plan.progress"],
    "only the last frame carries the id: a client cut off before it resumes from the id before and gets them all again",
  );
  const socket = stored.socketMessages("cluster:c").map((m) => JSON.parse(m) as { id: number; subscription: string; event: ClusterStreamEvent });
  t.deepEqual(
    socket.map((m) => [m.id, m.subscription, m.event.type]),
    [
      [9, "cluster:c", "task.ended"],
      [9, "cluster:c", "task.ended"],
      [9, "cluster:c", "plan.progress"],
    ],
  );
  t.deepEqual(socket[2]?.event, progress);
});
