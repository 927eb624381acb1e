import test from "ava";
import { accepts, applyEvents, startActor, type PersistedActor } from "../src/domain/actors.js";
import {
  CLUSTER_MACHINE_VERSION,
  clusterMachine,
  isActionAllowed,
  type ClusterContext,
  type ClusterEvent,
} from "../src/domain/cluster-machine.js";

const created = () => startActor<ClusterContext>(clusterMachine, CLUSTER_MACHINE_VERSION, { planId: "p1" }).persisted;
const apply = (p: PersistedActor<ClusterContext>, ...events: ClusterEvent[]) =>
  applyEvents<ClusterContext, ClusterEvent>(clusterMachine, p, events).persisted;

test("cluster machine - a new cluster is pending with a running create", (t) => {
  const c = created();
  t.is(c.value, "pending");
  t.deepEqual(c.context, { action: "cluster_create", actionstatus: "running", planId: "p1" });
});

test("cluster machine - create succeeds to active, fails to incomplete", (t) => {
  t.is(apply(created(), { type: "job.succeeded", planId: "p1" }).value, "active");
  const failed = apply(created(), { type: "job.failed", planId: "p1" });
  t.is(failed.value, "incomplete");
  t.is(failed.context.actionstatus, "failed");
});

test("cluster machine - a result of another job is ignored", (t) => {
  t.is(apply(created(), { type: "job.succeeded", planId: "other" }).value, "pending");
});

test("cluster machine - other actions fail to inconsistent, delete to incomplete, delete succeeds to terminated", (t) => {
  const active = apply(created(), { type: "job.succeeded", planId: "p1" });
  const stop = apply(active, { type: "job.started", action: "stop_services", planId: "p2" });
  t.is(stop.value, "pending");
  t.is(apply(stop, { type: "job.failed", planId: "p2" }).value, "inconsistent");
  const del = apply(active, { type: "job.started", action: "cluster_delete", planId: "p3" });
  t.is(apply(del, { type: "job.failed", planId: "p3" }).value, "incomplete");
  t.is(apply(del, { type: "job.succeeded", planId: "p3" }).value, "terminated");
});

test("cluster machine - a busy cluster accepts no new job; states allow only their actions", (t) => {
  const del: ClusterEvent = { type: "job.started", action: "cluster_delete", planId: "x" };
  t.false(accepts(clusterMachine, created(), del));
  t.true(isActionAllowed("active", "start_services"));
  t.true(isActionAllowed("inconsistent", "cluster_configure"));
  t.false(isActionAllowed("inconsistent", "start_services"));
  t.true(isActionAllowed("incomplete", "cluster_delete"));
  t.false(isActionAllowed("incomplete", "cluster_configure"));
  t.false(isActionAllowed("terminated", "cluster_delete"));
  t.false(isActionAllowed("pending", "cluster_delete"));
});
