import { assign, enqueueActions, setup } from "xstate";
import type { TaskName } from "@corral/contracts";
import { machineVersions } from "./actors.js";
import { emptyBits, hasBit, withBit } from "./bitset.js";

/**
 * The plan actor: runs the stages of a plan one after the other. Pure: events carry their time, actions are
 * returned by `transition` and carried out by src/actor/effects.ts (publish tasks, tell the cluster the job ended).
 *
 * Tasks are addressed by their global index (0-based, stage order); task ids are `<planId>-<index + 1>`.
 * Every dispatch of a task has a number (1 = first); a result for any other dispatch number is stale and
 * ignored, so duplicates and late results change nothing. A failed task is retried up to MAX_ATTEMPTS; a failed
 * CONFIRM of a cluster create is retried as DELETE, CREATE, CONFIRM on the same node. When a task has no
 * attempts left the plan stops dispatching, waits for tasks still running in the stage, and fails.
 */

export const PLAN_MACHINE_VERSION = "plan@1";
export const MAX_ATTEMPTS = 3;

/** One publication of one task. */
export interface Dispatch {
  index: number;
  dispatch: number;
  taskName: TaskName;
}

interface RetryState {
  dispatch: number;
  attempts: number;
  /** The plan's own task name (what a plain retry dispatches again). */
  original: TaskName;
  /** What the current dispatch runs (DELETE and CREATE during a CONFIRM rollback). */
  taskName: TaskName;
}

export interface PlanContext {
  /** Index of the first task of each stage, plus the total task count at the end. */
  stageStarts: number[];
  stage: number;
  /** Finished tasks of the current stage, by position in the stage. */
  done: string;
  doneInStage: number;
  completed: number;
  /** Tasks of the current stage without a final outcome yet. */
  inFlight: number;
  retries: Record<string, RetryState>;
  /** Dispatches decided but not yet confirmed published (the reconciler republishes them). */
  unpublished: { stages: number[]; tasks: Dispatch[]; since: number } | null;
  failure: { index: number; taskName: TaskName; message: string } | null;
  /** CONFIRM failures roll back through DELETE and CREATE (cluster create only). */
  rollbackConfirm: boolean;
  finishedAt: number | null;
}

export interface PlanInput {
  stageSizes: number[];
  rollbackConfirm: boolean;
  at: number;
}

export type PlanEvent =
  | { type: "task.result"; index: number; dispatch: number; taskName: TaskName; ok: boolean; message?: string; at: number }
  | { type: "dispatch.published"; stages: number[]; tasks: Array<{ index: number; dispatch: number }> };

/** The stage of the task at global `index`, and its position in that stage. */
export function stagePositionOf(c: Pick<PlanContext, "stageStarts">, index: number): { stage: number; position: number } {
  const starts = c.stageStarts;
  let stage = 0;
  while (stage + 1 < starts.length && (starts[stage + 1] ?? 0) <= index) stage++;
  return { stage, position: index - (starts[stage] ?? 0) };
}

/** Whether a plan actor has reached a final state. */
export const isPlanEnded = (actor: { value: unknown }): actor is { value: "succeeded" | "failed" } =>
  actor.value === "succeeded" || actor.value === "failed";

const stageCount = (c: PlanContext) => c.stageStarts.length - 1;
const stageSize = (c: PlanContext, stage: number) => (c.stageStarts[stage + 1] ?? 0) - (c.stageStarts[stage] ?? 0);
const isFinished = (c: PlanContext) => c.stage >= stageCount(c);

function withUnpublished(c: PlanContext, add: { stages?: number[]; tasks?: Dispatch[] }, at: number): PlanContext["unpublished"] {
  const current = c.unpublished ?? { stages: [], tasks: [], since: at };
  return {
    stages: [...current.stages, ...(add.stages ?? [])],
    tasks: [...current.tasks, ...(add.tasks ?? [])],
    since: current.since,
  };
}

type ResultEvent = Extract<PlanEvent, { type: "task.result" }>;

interface Step {
  context: Partial<PlanContext>;
  publishStage?: number;
  publishTasks?: Dispatch[];
}

/** What one result does to a running plan. */
function onResult(c: PlanContext, e: ResultEvent, stopping: boolean): Step | undefined {
  const first = c.stageStarts[c.stage] ?? 0;
  const position = e.index - first;
  if (position < 0 || position >= stageSize(c, c.stage) || hasBit(c.done, position)) return undefined;
  const retry = c.retries[e.index];
  if (e.dispatch !== (retry?.dispatch ?? 1)) return undefined;

  const retries = { ...c.retries };
  if (e.ok && retry && retry.taskName !== retry.original && !stopping) {
    // A rollback step succeeded: DELETE -> CREATE -> the original CONFIRM.
    const taskName: TaskName = retry.taskName === "DELETE" ? "CREATE" : retry.original;
    retries[e.index] = { ...retry, dispatch: retry.dispatch + 1, taskName };
    return { context: { retries }, publishTasks: [{ index: e.index, dispatch: retry.dispatch + 1, taskName }] };
  }
  if (e.ok) {
    delete retries[e.index];
    return {
      context: {
        retries,
        done: withBit(c.done, position),
        doneInStage: c.doneInStage + 1,
        completed: c.completed + 1,
        inFlight: c.inFlight - 1,
      },
    };
  }
  const attempts = retry?.attempts ?? 1;
  const original = retry?.original ?? e.taskName;
  if (attempts >= MAX_ATTEMPTS || stopping) {
    delete retries[e.index];
    return {
      context: {
        retries,
        done: withBit(c.done, position),
        inFlight: c.inFlight - 1,
        failure: c.failure ?? { index: e.index, taskName: e.taskName, message: e.message ?? `${e.taskName} failed` },
      },
    };
  }
  const taskName: TaskName = original === "CONFIRM" && c.rollbackConfirm ? "DELETE" : original;
  const dispatch = (retry?.dispatch ?? 1) + 1;
  retries[e.index] = { dispatch, attempts: attempts + 1, original, taskName };
  return { context: { retries }, publishTasks: [{ index: e.index, dispatch, taskName }] };
}

/** Moves to the next stage when the current one is complete. */
function advance(c: PlanContext): Step | undefined {
  if (c.failure || c.doneInStage < stageSize(c, c.stage)) return undefined;
  const stage = c.stage + 1;
  if (stage >= stageCount(c)) return { context: { stage } };
  return {
    context: { stage, done: emptyBits(stageSize(c, stage)), doneInStage: 0, inFlight: stageSize(c, stage), retries: {} },
    publishStage: stage,
  };
}

/** The next context and actions for a result; `undefined` when the result changes nothing. */
function reduceResult(
  context: PlanContext,
  event: ResultEvent,
  stopping: boolean,
): { context: PlanContext; publishTasks: Dispatch[]; publishStages: number[] } | undefined {
  const step = onResult(context, event, stopping);
  if (!step) return undefined;
  let next: PlanContext = { ...context, ...step.context };
  const moved = stopping ? undefined : advance(next);
  if (moved) next = { ...next, ...moved.context };
  const publishTasks = step.publishTasks ?? [];
  const publishStages = moved?.publishStage !== undefined ? [moved.publishStage] : [];
  if (publishTasks.length > 0 || publishStages.length > 0) {
    next.unpublished = withUnpublished(next, { stages: publishStages, tasks: publishTasks }, event.at);
  }
  next.unpublished = pruneUnpublished(next);
  if (isFinished(next) || (next.failure && next.inFlight === 0)) {
    next.finishedAt = event.at;
    next.unpublished = null;
  }
  return { context: next, publishTasks, publishStages };
}

/**
 * Drops outstanding publications of stages the plan has moved past: their tasks all completed, so they were
 * published; republishing them later (after the duplicate window) would run them again.
 */
function pruneUnpublished(c: PlanContext): PlanContext["unpublished"] {
  if (!c.unpublished) return null;
  const first = c.stageStarts[c.stage] ?? 0;
  const stages = c.unpublished.stages.filter((s) => s >= c.stage);
  const tasks = c.unpublished.tasks.filter((t) => t.index >= first);
  return stages.length === 0 && tasks.length === 0 ? null : { ...c.unpublished, stages, tasks };
}

/** Removes confirmed publications from the outstanding ones. */
function reducePublished(context: PlanContext, event: Extract<PlanEvent, { type: "dispatch.published" }>): PlanContext["unpublished"] {
  if (!context.unpublished) return null;
  const stages = context.unpublished.stages.filter((s) => !event.stages.includes(s));
  const done = new Set(event.tasks.map((t) => `${t.index}.${t.dispatch}`));
  const tasks = context.unpublished.tasks.filter((t) => !done.has(`${t.index}.${t.dispatch}`));
  return stages.length === 0 && tasks.length === 0 ? null : { ...context.unpublished, stages, tasks };
}

export const planMachine = setup({
  types: {
    context: {} as PlanContext,
    events: {} as PlanEvent,
    input: {} as PlanInput,
  },
  actions: {
    publishStage: (_, _params: { stage: number }) => {},
    publishTasks: (_, _params: { tasks: Dispatch[] }) => {},
    planFinished: (_, _params: { outcome: "succeeded" | "failed" }) => {},
    markPublished: assign(({ context, event }) =>
      event.type === "dispatch.published" ? { unpublished: reducePublished(context, event) } : {},
    ),
  },
  guards: {
    isComplete: ({ context }) => isFinished(context),
    hasFailed: ({ context }) => context.failure !== null,
    isDrained: ({ context }) => context.failure !== null && context.inFlight === 0,
  },
})
  .extend<{ applyResult: { stopping: boolean } }>({
    actions: {
      /** A task result, in a running plan or one that stops (`stopping`: no retries, no next stage). */
      applyResult: enqueueActions(({ context, event, enqueue }, params: { stopping: boolean }) => {
        if (event.type !== "task.result") return;
        const r = reduceResult(context, event, params.stopping);
        if (!r) return;
        enqueue.assign(r.context);
        if (r.publishTasks.length > 0) enqueue({ type: "publishTasks", params: { tasks: r.publishTasks } });
        for (const stage of r.publishStages) enqueue({ type: "publishStage", params: { stage } });
      }),
    },
  })
  .createMachine({
  id: "plan",
  context: ({ input }) => {
    const stageStarts = [0];
    for (const size of input.stageSizes) stageStarts.push((stageStarts[stageStarts.length - 1] ?? 0) + size);
    const hasStages = input.stageSizes.length > 0;
    return {
      stageStarts,
      stage: 0,
      done: emptyBits(input.stageSizes[0] ?? 0),
      doneInStage: 0,
      completed: 0,
      inFlight: input.stageSizes[0] ?? 0,
      retries: {},
      unpublished: hasStages ? { stages: [0], tasks: [], since: input.at } : null,
      failure: null,
      rollbackConfirm: input.rollbackConfirm,
      finishedAt: hasStages ? null : input.at,
    };
  },
  initial: "running",
  states: {
    running: {
      entry: enqueueActions(({ context, enqueue }) => {
        if (context.unpublished?.stages.includes(0)) enqueue({ type: "publishStage", params: { stage: 0 } });
      }),
      always: [
        { guard: "isComplete", target: "succeeded" },
        { guard: "isDrained", target: "failed" },
        { guard: "hasFailed", target: "failing" },
      ],
      on: {
        "task.result": { actions: { type: "applyResult", params: { stopping: false } } },
        "dispatch.published": { actions: "markPublished" },
      },
    },
    failing: {
      always: [{ guard: "isDrained", target: "failed" }],
      on: {
        "task.result": { actions: { type: "applyResult", params: { stopping: true } } },
        "dispatch.published": { actions: "markPublished" },
      },
    },
    succeeded: { type: "final", entry: { type: "planFinished", params: { outcome: "succeeded" } } },
    failed: { type: "final", entry: { type: "planFinished", params: { outcome: "failed" } } },
  },
});

/** Every plan machine a stored snapshot may name. */
export const planMachines = machineVersions("plan", PLAN_MACHINE_VERSION, { [PLAN_MACHINE_VERSION]: planMachine });
