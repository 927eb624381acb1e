import test from "ava";
import { StartGate } from "../src/plugins/docker/start-gate.js";

const tick = () => new Promise((r) => setImmediate(r));

test("at most the limit runs at once; the others start in order as places free up", async (t) => {
  const gate = new StartGate(2);
  const releases: Array<() => void> = [];
  const started: number[] = [];
  let running = 0;
  let most = 0;
  const runs = [0, 1, 2, 3, 4].map((i) =>
    gate.run(async () => {
      started.push(i);
      most = Math.max(most, ++running);
      await new Promise<void>((r) => releases.push(r));
      running--;
      return i;
    }),
  );
  await tick();
  t.deepEqual(started, [0, 1]);
  for (let done = 0; done < 5; done++) {
    releases.shift()!();
    await tick();
    await tick();
  }
  t.deepEqual(await Promise.all(runs), [0, 1, 2, 3, 4]);
  t.deepEqual(started, [0, 1, 2, 3, 4]);
  t.is(most, 2);
});

test("a failure frees its place; a waiter whose signal aborts leaves the queue with the reason", async (t) => {
  const gate = new StartGate(1);
  let release!: () => void;
  const first = gate.run(() => new Promise<void>((r) => (release = r)));
  const abort = new AbortController();
  const aborted = gate.run(async () => t.fail("an aborted waiter never runs"), abort.signal);
  const next = gate.run(async () => "next");
  abort.abort(new Error("task aborted"));
  await t.throwsAsync(aborted, { message: "task aborted" });
  release();
  await first;
  t.is(await next, "next");
  await t.throwsAsync(gate.run(async () => Promise.reject(new Error("start failed"))), { message: "start failed" });
  t.is(await gate.run(async () => "after a failure"), "after a failure");
});
