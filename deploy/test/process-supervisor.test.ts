/** The launcher's supervisor learns from each child, over its IPC channel, when it is ready. */
import test from "ava";
import { createSupervisor } from "../src/process-supervisor.js";

const child = (name: string, readyAfterMs: number | undefined) => ({
  name,
  command: process.execPath,
  args: [
    "-e",
    readyAfterMs === undefined
      ? "setInterval(() => {}, 1000)"
      : `setTimeout(() => process.send({ type: "ready" }, () => process.disconnect()), ${readyAfterMs}); setInterval(() => {}, 1000)`,
  ],
});

test("supervisor - allReady waits for every child's ready message and names those that never send one", async (t) => {
  const notices: string[] = [];
  const supervisor = createSupervisor({ onNotice: (m) => notices.push(m), stopGraceMs: 2_000 });
  t.teardown(() => supervisor.stopAll());
  supervisor.start(child("quick", 0));
  supervisor.start(child("slow", 700));
  const started = Date.now();
  await supervisor.allReady(10_000);
  t.true(Date.now() - started >= 600, "waited for the slow child");

  supervisor.start(child("silent", undefined));
  const err = await t.throwsAsync(supervisor.allReady(500));
  t.is(err?.message, "not ready after 500 ms: silent");
  t.deepEqual(notices, [], "no child died");
});
