import test from "ava";
import fc from "fast-check";
import { initialTransition } from "xstate";
import { applyEvents, startActor, type PersistedActor } from "../src/domain/actors.js";
import { MAX_ATTEMPTS, PLAN_MACHINE_VERSION, planMachine, type PlanContext, type PlanEvent } from "../src/domain/plan-machine.js";

const start = (stageSizes: number[], rollbackConfirm = false) =>
  startActor<PlanContext>(planMachine, PLAN_MACHINE_VERSION, { stageSizes, rollbackConfirm, at: 0 });
const apply = (p: PersistedActor<PlanContext>, events: PlanEvent[]) => applyEvents<PlanContext, PlanEvent>(planMachine, p, events);
const ok = (index: number, dispatch = 1, taskName: "START" | "CONFIRM" | "DELETE" | "CREATE" = "START"): PlanEvent => ({
  type: "task.result",
  index,
  dispatch,
  taskName,
  ok: true,
  at: 1,
});
const fail = (index: number, dispatch = 1, taskName: "START" | "CONFIRM" | "DELETE" | "CREATE" = "START"): PlanEvent => ({
  type: "task.result",
  index,
  dispatch,
  taskName,
  ok: false,
  message: "boom",
  at: 1,
});

test("plan machine - starts by publishing stage 0", (t) => {
  const s = start([2, 1]);
  t.is(s.persisted.value, "running");
  t.deepEqual(s.actions, [{ type: "publishStage", params: { stage: 0 } }]);
  t.deepEqual(s.persisted.context.unpublished?.stages, [0]);
});

test("plan machine - a start decides what xstate's own initialTransition decides, for any plan shape", (t) => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 5 }), fc.boolean(), (stageSizes, rollbackConfirm) => {
      const input = { stageSizes, rollbackConfirm, at: 7 };
      const [snapshot, executed] = initialTransition(planMachine, input);
      const started = startActor<PlanContext>(planMachine, PLAN_MACHINE_VERSION, input);
      t.deepEqual(started.persisted, { machine: PLAN_MACHINE_VERSION, value: snapshot.value, context: snapshot.context });
      const expected = executed.filter((a) => !a.type.startsWith("xstate.")).map((a) => ({ type: a.type, params: a.params ?? {} }));
      t.deepEqual(started.actions, expected);
    }),
  );
});

test("plan machine - an empty plan succeeds at once", (t) => {
  const s = start([]);
  t.is(s.persisted.value, "succeeded");
  t.deepEqual(s.actions, [{ type: "planFinished", params: { outcome: "succeeded" } }]);
});

test("plan machine - a stage completes only when all its tasks do, then the next is published", (t) => {
  let r = apply(start([2, 1]).persisted, [ok(0)]);
  t.deepEqual(r.actions, []);
  r = apply(r.persisted, [ok(1)]);
  t.deepEqual(r.actions, [{ type: "publishStage", params: { stage: 1 } }]);
  r = apply(r.persisted, [ok(2)]);
  t.is(r.persisted.value, "succeeded");
  t.deepEqual(r.actions, [{ type: "planFinished", params: { outcome: "succeeded" } }]);
  t.is(r.persisted.context.completed, 3);
});

test("plan machine - duplicate, stale and out-of-stage results change nothing", (t) => {
  const r1 = apply(start([2, 1]).persisted, [ok(0)]);
  for (const e of [ok(0), ok(0, 2), ok(2), ok(7)]) {
    const r = apply(r1.persisted, [e]);
    t.false(r.changed, JSON.stringify(e));
    t.deepEqual(r.actions, []);
  }
});

test("plan machine - a failed task is retried with the next dispatch number, up to MAX_ATTEMPTS", (t) => {
  let r = apply(start([1]).persisted, [fail(0, 1)]);
  t.deepEqual(r.actions, [{ type: "publishTasks", params: { tasks: [{ index: 0, dispatch: 2, taskName: "START" }] } }]);
  r = apply(r.persisted, [fail(0, 2)]);
  t.deepEqual(r.actions, [{ type: "publishTasks", params: { tasks: [{ index: 0, dispatch: 3, taskName: "START" }] } }]);
  r = apply(r.persisted, [fail(0, 3)]);
  t.is(MAX_ATTEMPTS, 3);
  t.is(r.persisted.value, "failed");
  t.deepEqual(r.actions, [{ type: "planFinished", params: { outcome: "failed" } }]);
});

test("plan machine - a failed CONFIRM of a create rolls back through DELETE and CREATE", (t) => {
  let r = apply(start([1], true).persisted, [fail(0, 1, "CONFIRM")]);
  t.deepEqual(r.actions, [{ type: "publishTasks", params: { tasks: [{ index: 0, dispatch: 2, taskName: "DELETE" }] } }]);
  r = apply(r.persisted, [ok(0, 2, "DELETE")]);
  t.deepEqual(r.actions, [{ type: "publishTasks", params: { tasks: [{ index: 0, dispatch: 3, taskName: "CREATE" }] } }]);
  r = apply(r.persisted, [ok(0, 3, "CREATE")]);
  t.deepEqual(r.actions, [{ type: "publishTasks", params: { tasks: [{ index: 0, dispatch: 4, taskName: "CONFIRM" }] } }]);
  r = apply(r.persisted, [ok(0, 4, "CONFIRM")]);
  t.is(r.persisted.value, "succeeded");
});

test("plan machine - after a final failure it waits for running tasks of the stage, then fails", (t) => {
  let r = apply(start([3, 1]).persisted, [fail(0, 1), fail(0, 2)]);
  r = apply(r.persisted, [fail(0, 3)]);
  t.is(r.persisted.value, "failing");
  t.false(r.actions.some((a) => a.type === "publishTasks" || a.type === "publishStage"));
  r = apply(r.persisted, [ok(1)]);
  t.is(r.persisted.value, "failing");
  r = apply(r.persisted, [fail(2)]);
  t.is(r.persisted.value, "failed", "no retry while failing");
  t.deepEqual(r.actions, [{ type: "planFinished", params: { outcome: "failed" } }]);
});

test("plan machine - confirmed publications are cleared", (t) => {
  const s = start([2]);
  const r = apply(s.persisted, [{ type: "dispatch.published", stages: [0], tasks: [] }]);
  t.is(r.persisted.context.unpublished, null);
});

// Whatever order results arrive in, with duplicates, every task completes once and the plan succeeds.
test("plan machine - any interleaving of duplicated results completes each task exactly once", (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 5 }),
      fc.infiniteStream(fc.nat()),
      (sizes, picks) => {
        let p = start(sizes).persisted;
        const total = sizes.reduce((a, b) => a + b, 0);
        const it = picks[Symbol.iterator]();
        let guard = 0;
        while (p.value === "running" && guard++ < 10_000) {
          const c = p.context;
          const first = c.stageStarts[c.stage] ?? 0;
          const size = (c.stageStarts[c.stage + 1] ?? 0) - first;
          const index = first + ((it.next().value as number) % size);
          p = apply(p, [ok(index), ok(index)]).persisted;
        }
        return p.value === "succeeded" && p.context.completed === total;
      },
    ),
  );
  t.pass();
});
