/** deploy/src/idle-gc.ts: a full collection when a process is idle with a grown young generation. */
import test from "ava";
import { collectWhenIdle, GROWN_YOUNG_GENERATION_BYTES, IDLE_CHECK_MS, IDLE_UTILIZATION } from "../src/idle-gc.js";

const busy = IDLE_UTILIZATION * 5;
const idle = IDLE_UTILIZATION / 4;
const grown = GROWN_YOUNG_GENERATION_BYTES * 8;
const small = GROWN_YOUNG_GENERATION_BYTES / 4;

/**
 * Runs collectWhenIdle over checks of [event loop load, young generation size before the check]; a collection
 * shrinks the young generation as V8's does. Answers at which checks (from 1) it collected.
 */
function collectionsFor(checks: Array<[load: number, youngBytes: number]>): number[] {
  const collected: number[] = [];
  let at = 0;
  let young = 0;
  let intervalMs = 0;
  let tick: () => void = () => {};
  const stop = collectWhenIdle({
    gc: () => {
      collected.push(at);
      young = small;
    },
    utilization: () => checks[at - 1]?.[0] ?? 0,
    youngGenerationBytes: () => young,
    every: (ms, fn) => {
      intervalMs = ms;
      tick = fn;
      return () => {};
    },
  });
  for (at = 1; at <= checks.length; at++) {
    // Work grows the young generation between checks; idling leaves it as it was.
    young = Math.max(young, checks[at - 1]![1]);
    tick();
  }
  stop();
  if (intervalMs !== IDLE_CHECK_MS) throw new Error(`checked every ${intervalMs} ms`);
  return collected;
}

test("idle gc - collects once the process is idle with a grown young generation, then not while it stays idle", (t) => {
  t.deepEqual(collectionsFor([[idle, grown], [idle, 0], [idle, 0]]), [1]);
  t.deepEqual(collectionsFor([[busy, grown], [busy, grown], [idle, 0], [idle, 0]]), [3], "not while the start runs on");
  t.deepEqual(collectionsFor([[idle, small], [idle, small]]), [], "a young generation that never grew");
});

test("idle gc - collects again once a busy spell that grew the young generation ends, never while busy", (t) => {
  t.deepEqual(collectionsFor([[idle, grown], [busy, grown], [busy, 0], [idle, 0], [idle, 0], [busy, small], [idle, 0]]), [1, 4]);
  t.deepEqual(collectionsFor([[busy, grown], [busy, grown], [busy, grown]]), []);
});

test("idle gc - does nothing without a gc function (node run without --expose-gc)", (t) => {
  let scheduled = false;
  const stop = collectWhenIdle({ gc: undefined, every: () => ((scheduled = true), () => {}) });
  stop();
  t.is(typeof (globalThis as { gc?: unknown }).gc, "undefined", "ava runs node without --expose-gc");
  t.false(scheduled);
});
