/**
 * The durable actors (src/actor/) on a real nats-server, without gateway, tenancy service or provisioners: every
 * event of the cluster and plan machines sent through `send` and carried out by the effects, concurrent senders
 * on one actor (in one process and in several), and a process killed between an actor's write and its effects.
 * Tests that run the reconciler are serial (ava runs them first, alone): it reconciles every cluster it finds.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { ExecutionContext } from "ava";
import { repoRoot } from "@corral/deploy";
import { CorralError, encode, kvKey, type Tenant } from "@corral/contracts";
import { openClusterBuckets } from "../src/adapters/buckets.js";
import { hasBit } from "../src/domain/bitset.js";
import { MAX_ATTEMPTS, type PlanEvent } from "../src/domain/plan-machine.js";
import type { ClusterRecord, PlanRecord } from "../src/domain/records.js";
import { testWithNats, type NatsContext } from "../../../test/helpers/nats-test.js";
import { LEASE, startCore, storedTaskMessages, storedTasks, testCatalog, type Core } from "./helpers/core.js";

const test = testWithNats("clusters-actors-test");
type T = ExecutionContext<NatsContext>;

interface Fixture {
  core: Core;
  tenant: Tenant;
}

async function fixture(t: T, tenant: Partial<Tenant> = {}): Promise<Fixture> {
  const full: Tenant = { name: `t${randomUUID().slice(0, 8)}`, workers: 1, ...tenant };
  const core = await startCore(t.context.nc, { tenant: full });
  t.teardown(() => core.stop());
  return { core, tenant: full };
}

const createPlanId = (id: string) => `${id}-001`;

async function cluster(core: Core, id: string): Promise<ClusterRecord> {
  const found = (await core.deps.clusters.get(id))?.value;
  if (!found) throw new Error(`cluster ${id} is missing`);
  return found;
}

async function plan(core: Core, id: string, planId: string): Promise<PlanRecord> {
  const found = (await core.deps.plans.get(id, planId))?.value;
  if (!found) throw new Error(`plan ${planId} is missing`);
  return found;
}

/**
 * Results for every task of the plan's current stage still without one, each for its current dispatch and task
 * name (a rollback's DELETE and CREATE included); `fail` picks the tasks that fail (by global index).
 */
async function stageResults(core: Core, p: PlanRecord, fail: (index: number) => boolean = () => false): Promise<PlanEvent[]> {
  const c = p.actor.context;
  const first = c.stageStarts[c.stage] ?? 0;
  const tasks = await core.deps.plans.stageTasks(p, c.stage);
  const events: PlanEvent[] = [];
  tasks.forEach((task, position) => {
    const index = first + position;
    if (hasBit(c.done, position)) return;
    const retry = c.retries[index];
    const ok = !fail(index);
    events.push({
      type: "task.result",
      index,
      dispatch: retry?.dispatch ?? 1,
      taskName: retry?.taskName ?? task.taskName,
      ok,
      ...(ok ? {} : { message: "boom" }),
      at: Date.now(),
    });
  });
  return events;
}

/** Sends ok results stage after stage until the plan ends. */
async function runToEnd(core: Core, id: string, planId: string): Promise<PlanRecord> {
  for (let guard = 0; guard < 50; guard++) {
    const p = await plan(core, id, planId);
    if (p.actor.value !== "running") return p;
    await core.actors.effects.deliverToPlan({ clusterId: id, planId }, await stageResults(core, p));
  }
  throw new Error(`plan ${planId} did not end`);
}

async function createdCluster(f: Fixture, numMachines = 2): Promise<string> {
  return f.core.operations.create(f.core.admin, { name: `c${randomUUID().slice(0, 6)}`, clusterTemplate: "t1", numMachines });
}

async function activeCluster(f: Fixture, numMachines = 2): Promise<string> {
  const id = await createdCluster(f, numMachines);
  await runToEnd(f.core, id, createPlanId(id));
  return id;
}

const taskKeys = (tasks: Array<{ taskId: string; dispatch: number }>) => tasks.map((x) => `${x.taskId}.${x.dispatch}`);

test("actor - a created cluster publishes its plan stage by stage, each task once, and becomes active", async (t) => {
  const f = await fixture(t);
  const id = await createdCluster(f, 3);
  const planId = createPlanId(id);
  await f.core.actors.effects.flushPublishedMarks();
  let p = await plan(f.core, id, planId);
  t.is((await cluster(f.core, id)).actor.value, "pending");
  t.is(p.actor.machine, "plan@1");
  t.is(p.actor.context.unpublished, null, "stage 0 published and confirmed (dispatch.published)");
  t.deepEqual(taskKeys(await storedTasks(t.context.nc, f.tenant.name)), [1, 2, 3].map((n) => `${planId}-00${n}.1`));
  p = await runToEnd(f.core, id, planId);
  t.is(p.actor.value, "succeeded");
  const total = p.stageSizes.reduce((a, b) => a + b, 0);
  const stored = await storedTasks(t.context.nc, f.tenant.name);
  t.is(stored.length, total, "every task of every stage, once");
  t.is(new Set(taskKeys(stored)).size, total);
  const c = await cluster(f.core, id);
  t.is(c.actor.value, "active");
  t.deepEqual(c.actor.context, { action: "cluster_create", actionstatus: "complete", planId });
  t.deepEqual(c.progress, { stepstotal: total, stepscompleted: total });
  t.is(p.resultsApplied, total);
});

test("actor - a stage's publication mark rides on the write of the stage's results: one plan write per stage", async (t) => {
  const tenant: Tenant = { name: `t${randomUUID().slice(0, 8)}`, workers: 1 };
  const planWrites = new Map<string, number>();
  const core = await startCore(t.context.nc, {
    tenant,
    afterWrite: (kind, record) => {
      if (kind !== "plan") return;
      const id = (record as PlanRecord).id;
      planWrites.set(id, (planWrites.get(id) ?? 0) + 1);
    },
  });
  t.teardown(() => core.stop());
  const id = await createdCluster({ core, tenant }, 3);
  const planId = createPlanId(id);
  t.deepEqual((await plan(core, id, planId)).actor.context.unpublished?.stages, [0], "the mark of stage 0 is held, not written");
  const p = await runToEnd(core, id, planId);
  t.is(p.actor.value, "succeeded");
  t.is(planWrites.get(planId), 1 + p.stageSizes.length, "the create, then one write per stage's results");
  t.is(p.actor.context.unpublished, null);

  // A mark no results write picks up is written alone.
  const other = await createdCluster({ core, tenant }, 3);
  const otherPlan = createPlanId(other);
  await core.actors.effects.flushPublishedMarks();
  t.is((await plan(core, other, otherPlan)).actor.context.unpublished, null);
  t.is(planWrites.get(otherPlan), 2);
});

test("actor - a failed task is dispatched again up to MAX_ATTEMPTS, then the plan fails and the create leaves the cluster incomplete", async (t) => {
  const f = await fixture(t);
  const id = await createdCluster(f, 1);
  const planId = createPlanId(id);
  const ref = { clusterId: id, planId };
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    await f.core.actors.effects.deliverToPlan(ref, await stageResults(f.core, await plan(f.core, id, planId), () => true));
  }
  const p = await plan(f.core, id, planId);
  t.is(p.actor.value, "failed");
  t.like(p.actor.context.failure, { index: 0, taskName: "CREATE", message: "boom" });
  t.deepEqual(taskKeys(await storedTasks(t.context.nc, f.tenant.name)), [`${planId}-001.1`, `${planId}-001.2`, `${planId}-001.3`]);
  const c = await cluster(f.core, id);
  t.is(c.actor.value, "incomplete");
  t.is(c.actor.context.actionstatus, "failed");
});

test("actor - a failed CONFIRM of a create is dispatched again as DELETE, CREATE, CONFIRM", async (t) => {
  const f = await fixture(t);
  const id = await createdCluster(f, 1);
  const planId = createPlanId(id);
  const ref = { clusterId: id, planId };
  await f.core.actors.effects.deliverToPlan(ref, await stageResults(f.core, await plan(f.core, id, planId)));
  await f.core.actors.effects.deliverToPlan(ref, await stageResults(f.core, await plan(f.core, id, planId), () => true));
  for (let i = 0; i < 3; i++) await f.core.actors.effects.deliverToPlan(ref, await stageResults(f.core, await plan(f.core, id, planId)));
  const names = (await storedTasks(t.context.nc, f.tenant.name)).map((x) => `${x.taskName}.${x.dispatch}`);
  t.deepEqual(names.slice(0, 5), ["CREATE.1", "CONFIRM.1", "DELETE.2", "CREATE.3", "CONFIRM.4"]);
  t.is((await plan(f.core, id, planId)).actor.context.stage, 2, "then the next stage");
});

test("actor - duplicate, stale and out-of-stage results publish nothing and change no progress", async (t) => {
  const f = await fixture(t);
  const id = await createdCluster(f, 2);
  const planId = createPlanId(id);
  const ref = { clusterId: id, planId };
  const [first] = await stageResults(f.core, await plan(f.core, id, planId));
  if (!first || first.type !== "task.result") throw new Error("no task in stage 0");
  await f.core.actors.effects.deliverToPlan(ref, [first]);
  const before = await plan(f.core, id, planId);
  const published = (await storedTasks(t.context.nc, f.tenant.name)).length;
  await f.core.actors.effects.deliverToPlan(ref, [
    first,
    { ...first, dispatch: 2 },
    { ...first, index: 3 },
    { ...first, index: 99 },
  ]);
  const after = await plan(f.core, id, planId);
  t.deepEqual(after.actor, before.actor, "the snapshot did not move");
  t.is(after.resultsApplied, (before.resultsApplied ?? 0) + 4, "stale results are still counted while the plan runs");
  t.is((await storedTasks(t.context.nc, f.tenant.name)).length, published);
});

test("actor - job.started: a configure stores its config in the write that starts it; a busy or incomplete cluster refuses with 409", async (t) => {
  const f = await fixture(t);
  const id = await activeCluster(f);
  const jobs = (await cluster(f.core, id)).jobs.length;
  await f.core.operations.configure(f.core.admin, id, { config: { answer: 42 }, restart: false, providerFields: {} });
  const c = await cluster(f.core, id);
  t.is(c.actor.value, "pending");
  t.deepEqual(c.config, { answer: 42 });
  t.is(c.jobs.length, jobs + 1);
  t.deepEqual(c.actor.context, { action: "cluster_configure", actionstatus: "running", planId: c.jobs.at(-1) });
  const busy = await t.throwsAsync<CorralError>(f.core.operations.runServices(f.core.admin, id, "stop_services", undefined, {}));
  t.like(busy, { status: 409, code: "cluster_busy" });
  t.is((await cluster(f.core, id)).jobs.length, jobs + 1, "the refused job is not recorded");

  const failed = await fixture(t);
  const incomplete = await createdCluster(failed, 1);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const p = await plan(failed.core, incomplete, createPlanId(incomplete));
    await failed.core.actors.effects.deliverToPlan({ clusterId: incomplete, planId: p.id }, await stageResults(failed.core, p, () => true));
  }
  const wrong = await t.throwsAsync<CorralError>(
    failed.core.operations.configure(failed.core.admin, incomplete, { config: {}, restart: false, providerFields: {} }),
  );
  t.like(wrong, { status: 409, code: "wrong_state" });
});

test("actor - job.failed of the current plan leaves a configured cluster inconsistent; job.succeeded of another plan is ignored", async (t) => {
  const f = await fixture(t);
  const id = await activeCluster(f, 1);
  await f.core.operations.configure(f.core.admin, id, { config: { a: 1 }, restart: false, providerFields: {} });
  const c = await cluster(f.core, id);
  const planId = c.actor.context.planId;
  t.is(await f.core.actors.effects.deliverToCluster(id, [{ type: "job.succeeded", planId: createPlanId(id) }]), undefined, "a stale job end writes nothing");
  t.is((await cluster(f.core, id)).actor.value, "pending");
  const after = await f.core.actors.effects.deliverToCluster(id, [{ type: "job.failed", planId, steps: { stepstotal: 3, stepscompleted: 1 } }]);
  t.is(after?.actor.value, "inconsistent");
  t.is(after?.actor.context.actionstatus, "failed");
  t.deepEqual(after?.progress, { stepstotal: 3, stepscompleted: 1 });
});

test("actor - a delete that succeeds terminates the cluster, releases its usage once and wipes its provider fields", async (t) => {
  const f = await fixture(t);
  const id = await activeCluster(f, 2);
  t.deepEqual(await f.core.deps.usage.get(f.tenant.name), { clusters: 1, nodes: 2 });
  await f.core.operations.delete(f.core.admin, id, { token: "secret" });
  const planId = (await cluster(f.core, id)).actor.context.planId;
  t.deepEqual(await f.core.deps.credentials.get(id, planId), { token: "secret" }, "kept while the delete runs");
  const deleteTasks = (await storedTaskMessages(t.context.nc, f.tenant.name)).filter((m) => m.planId === planId);
  t.true(deleteTasks.length > 0);
  for (const task of deleteTasks) t.deepEqual(task.config.provider.provisioner, { ...testCatalog().providers[0]?.provisioner, token: "secret" });
  await runToEnd(f.core, id, planId);
  const c = await cluster(f.core, id);
  t.is(c.actor.value, "terminated");
  t.true(c.released);
  t.deepEqual(await f.core.deps.usage.get(f.tenant.name), { clusters: 0, nodes: 0 });
  t.deepEqual(await f.core.deps.credentials.get(id, planId), {});
  // The job end arrives again (a redelivery): the terminated cluster takes nothing, releases nothing.
  t.is(await f.core.actors.effects.deliverToCluster(id, [{ type: "job.succeeded", planId }]), undefined);
  t.deepEqual(await f.core.deps.usage.get(f.tenant.name), { clusters: 0, nodes: 0 });
});

test("actor - a plan's provider fields are purged when it ends; a plan known to have none asks for no purge", async (t) => {
  const f = await fixture(t);
  const purged: string[] = [];
  const purge = f.core.deps.credentials.purge.bind(f.core.deps.credentials);
  f.core.deps.credentials.purge = async (clusterId, planId) => {
    purged.push(planId);
    await purge(clusterId, planId);
  };
  const id = await activeCluster(f, 2);
  t.deepEqual(purged, [], "the create gave no provider fields");
  await f.core.operations.delete(f.core.admin, id, { token: "secret" });
  const planId = (await cluster(f.core, id)).actor.context.planId;
  await runToEnd(f.core, id, planId);
  t.true(purged.includes(planId));
  t.deepEqual(await f.core.deps.credentials.get(id, planId), {});
});

test("actor - lease.extend is taken while the cluster is settled, 400 beyond its step or max, 409 while pending and once terminated", async (t) => {
  const f = await fixture(t);
  const id = await activeCluster(f, 1);
  const c0 = await cluster(f.core, id);
  const later = c0.expireTime + LEASE.step;
  await f.core.operations.extendLease(f.core.admin, id, later);
  const c1 = await cluster(f.core, id);
  t.is(c1.expireTime, later);
  t.deepEqual(c1.actor, c0.actor, "the machine stays where it is");
  const tooFar = await t.throwsAsync<CorralError>(f.core.operations.extendLease(f.core.admin, id, later + LEASE.step + 1));
  t.like(tooFar, { status: 400 });
  await f.core.operations.configure(f.core.admin, id, { config: {}, restart: false, providerFields: {} });
  const pending = await t.throwsAsync<CorralError>(f.core.operations.extendLease(f.core.admin, id, later + 1));
  t.like(pending, { status: 409 });
  t.regex(pending?.message ?? "", /is pending; its lease cannot be extended/);
  await runToEnd(f.core, id, (await cluster(f.core, id)).actor.context.planId);
  await f.core.operations.delete(f.core.admin, id, {});
  await runToEnd(f.core, id, (await cluster(f.core, id)).actor.context.planId);
  const terminated = await t.throwsAsync<CorralError>(f.core.operations.extendLease(f.core.admin, id, later + 1));
  t.like(terminated, { status: 409 });
  t.is((await cluster(f.core, id)).expireTime, later);
});

test("actor - a stored snapshot of a machine version this process does not know is a clear error, and nothing is written", async (t) => {
  const f = await fixture(t);
  const id = await createdCluster(f, 1);
  const planId = createPlanId(id);
  const buckets = await openClusterBuckets(t.context.nc);
  const stored = await f.core.deps.plans.get(id, planId);
  if (!stored) throw new Error("no plan");
  const future: PlanRecord = { ...stored.value, actor: { ...stored.value.actor, machine: "plan@9" } };
  await buckets.plans.put(kvKey(id, planId), encode(future));
  const err = await t.throwsAsync<CorralError>(
    f.core.actors.effects.deliverToPlan({ clusterId: id, planId }, await stageResults(f.core, stored.value)),
  );
  t.like(err, { status: 500, code: "unknown_machine_version" });
  t.regex(err?.message ?? "", /no plan machine of version plan@9/);
  t.deepEqual((await f.core.deps.plans.get(id, planId))?.value, future);
});

/** The `count` results of a create's stage 0 were each applied once, and stage 1 (CONFIRM) published once. */
async function eachResultAppliedOnce(t: T, f: Fixture, id: string, planId: string, count: number) {
  const p = await plan(f.core, id, planId);
  t.is(p.actor.context.completed, count);
  t.is(p.resultsApplied, count);
  t.is(p.actor.context.stage, 1);
  const confirms = (await storedTasks(t.context.nc, f.tenant.name)).filter((x) => x.taskName === "CONFIRM");
  t.is(confirms.length, count, "stage 1 published once");
}

test("actor - 20 concurrent sends to one plan: each result applied exactly once, the next stage published once", async (t) => {
  const f = await fixture(t);
  const id = await createdCluster(f, 20);
  const planId = createPlanId(id);
  const events = await stageResults(f.core, await plan(f.core, id, planId));
  t.is(events.length, 20);
  await Promise.all(events.map((e) => f.core.actors.effects.deliverToPlan({ clusterId: id, planId }, [e])));
  await eachResultAppliedOnce(t, f, id, planId, 20);
});

interface ChildSend {
  tenant: string;
  clusterId: string;
  planId: string;
  events: PlanEvent[];
  /** Epoch ms the child waits for before sending. */
  startAt?: number;
  /** The child kills itself right after the plan write that decided an action of this type. */
  crashOn?: "publishStage" | "planFinished";
}

/** Sends events from test/helpers/send-child.ts, a process of its own; answers how it ended. */
function sendFromAnotherProcess(t: T, send: ChildSend): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  const env: Record<string, string> = {
    SEND_NATS_URL: t.context.nats.url,
    SEND_TENANT: send.tenant,
    SEND_CLUSTER: send.clusterId,
    SEND_PLAN: send.planId,
    SEND_EVENTS: JSON.stringify(send.events),
    ...(send.startAt !== undefined ? { SEND_START_AT: String(send.startAt) } : {}),
    ...(send.crashOn !== undefined ? { SEND_CRASH_ON: send.crashOn } : {}),
  };
  const child = spawn(process.execPath, ["--import=tsx", "services/clusters/test/helpers/send-child.ts"], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal, output })));
}

/** Sends the results of the plan's current stage from another process, which dies right after the plan's write. */
async function crashAfterWrite(t: T, f: Fixture, id: string, planId: string, crashOn: "publishStage" | "planFinished") {
  const events = await stageResults(f.core, await plan(f.core, id, planId));
  const end = await sendFromAnotherProcess(t, { tenant: f.tenant.name, clusterId: id, planId, events, crashOn });
  t.is(end.signal, "SIGKILL", end.output);
}

test("actor - senders in 4 processes race on one plan (compare-and-set): each result applied exactly once", async (t) => {
  t.timeout(120_000);
  const f = await fixture(t);
  const id = await createdCluster(f, 20);
  const planId = createPlanId(id);
  const events = await stageResults(f.core, await plan(f.core, id, planId));
  const startAt = Date.now() + 8_000;
  const ends = await Promise.all(
    [0, 1, 2, 3].map((k) =>
      sendFromAnotherProcess(t, { tenant: f.tenant.name, clusterId: id, planId, events: events.filter((_, i) => i % 4 === k), startAt }),
    ),
  );
  for (const end of ends) t.is(end.code, 0, end.output);
  await eachResultAppliedOnce(t, f, id, planId, 20);
});

test.serial("crash - a process killed between the plan's write and publishing the next stage: the reconciler publishes it", async (t) => {
  t.timeout(120_000);
  const f = await fixture(t);
  const id = await createdCluster(f, 2);
  const planId = createPlanId(id);
  await crashAfterWrite(t, f, id, planId, "publishStage");
  const written = await plan(f.core, id, planId);
  t.is(written.actor.context.stage, 1, "the write that moved to stage 1 was stored");
  t.deepEqual(written.actor.context.unpublished?.stages, [1], "its publication still owed");
  t.is((await storedTasks(t.context.nc, f.tenant.name)).filter((x) => x.taskName === "CONFIRM").length, 0, "nothing of stage 1 published");

  await f.core.reconciler.run();
  const confirms = (await storedTasks(t.context.nc, f.tenant.name)).filter((x) => x.taskName === "CONFIRM");
  t.deepEqual(taskKeys(confirms), [`${planId}-003.1`, `${planId}-004.1`]);
  t.true(confirms.every((x) => x.republished));
  t.is((await plan(f.core, id, planId)).actor.context.unpublished, null, "confirmed");
  t.is((await runToEnd(f.core, id, planId)).actor.value, "succeeded");
  t.is((await cluster(f.core, id)).actor.value, "active");
});

test.serial("crash - a process killed between the plan's final write and telling the cluster: the reconciler finishes the job", async (t) => {
  t.timeout(120_000);
  const f = await fixture(t);
  const id = await createdCluster(f, 1);
  const planId = createPlanId(id);
  const ref = { clusterId: id, planId };
  for (let guard = 0; guard < 20; guard++) {
    const p = await plan(f.core, id, planId);
    if (p.actor.context.stage === p.stageSizes.length - 1) break;
    await f.core.actors.effects.deliverToPlan(ref, await stageResults(f.core, p));
  }
  await crashAfterWrite(t, f, id, planId, "planFinished");
  t.is((await plan(f.core, id, planId)).actor.value, "succeeded");
  t.is((await cluster(f.core, id)).actor.value, "pending", "the cluster was not told");
  const published = (await storedTasks(t.context.nc, f.tenant.name)).length;

  await f.core.reconciler.run();
  const c = await cluster(f.core, id);
  t.is(c.actor.value, "active");
  t.is(c.actor.context.actionstatus, "complete");
  t.is((await storedTasks(t.context.nc, f.tenant.name)).length, published, "nothing published again");
  t.deepEqual(await f.core.deps.usage.get(f.tenant.name), { clusters: 1, nodes: 1 });
});

test.serial("head - every write gives a cluster record the head other services read; one without it gets it from the reconciler", async (t) => {
  const f = await fixture(t);
  const id = await createdCluster(f, 1);
  t.like(await cluster(f.core, id), { tenant: f.tenant.name, status: "pending", actor: { value: "pending" } });
  await runToEnd(f.core, id, createPlanId(id));
  const active = await cluster(f.core, id);
  t.like(active, { status: "active", actor: { value: "active" } });

  // A record as stored before records had a head's status: nothing else changes it, the reconciler writes it.
  const { status: _status, ...headless } = active;
  await (await openClusterBuckets(t.context.nc)).clusters.put(kvKey(id), encode(headless));
  t.false("status" in (await cluster(f.core, id)));
  await f.core.reconciler.run();
  const { status, ...rest } = await cluster(f.core, id);
  t.is(status, "active");
  t.deepEqual(rest, headless, "nothing else changed");
});
