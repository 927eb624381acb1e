/**
 * A provisioner that starts before the task stream exists (a fresh installation, the clusters service not up yet)
 * waits for it quietly. Issue 10, "A run as a new user": the first `npm start` printed "task consumer unavailable;
 * retrying" with a stack trace every second until the stream appeared.
 */
import { decode, type TaskMessage } from "@corral/contracts";
import { createLogger, ensureStreams } from "@corral/shared";
import { createTaskFeed } from "@corral/provisioner/testing";
import { eventually, publishTask, taskMessage, uniqueName } from "./helpers.js";
import { testWithNats } from "../../test/helpers/nats-test.js";

// No streams at the start: this file's server is as fresh as a first start's.
const test = testWithNats("task-feed-wait-test");

interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

test("task feed - waiting for the task stream is one info line without a stack, then 'ready'; the task still arrives", async (t) => {
  const lines: LogLine[] = [];
  const log = createLogger({}, { level: "debug", write: (line) => void lines.push(JSON.parse(line) as LogLine) });
  const tenant = uniqueName("wait");
  const feed = createTaskFeed({ nc: t.context.nc, tenant, log, pullExpiresMs: 2_000 });
  t.teardown(() => feed.close());

  const waiting = feed.next(new AbortController().signal);
  await eventually(async () => lines.filter((l) => l.msg.includes("task consumer")).length >= 3, {
    what: "a few attempts while the stream is missing",
    timeoutMs: 15_000,
  });
  await ensureStreams(t.context.nc);
  const task = taskMessage({ tenant, taskId: "00000001-001-1" });
  await publishTask(t.context.nc, task);
  const got = await waiting;
  t.is(decode<TaskMessage>(got!.data).taskId, task.taskId);
  got?.ack();

  const shown = lines.map((l) => `${l.level} ${l.msg} ${JSON.stringify(l)}`).join("\n");
  t.false(/"stack"/.test(JSON.stringify(lines)), `no stack trace:\n${shown}`);
  t.deepEqual(
    lines.filter((l) => l.level === "warn" || l.level === "error"),
    [],
    "a short wait is no warning",
  );
  const infos = lines.filter((l) => l.level === "info").map((l) => l.msg);
  t.deepEqual(infos, ["waiting for the task consumer; retrying every second", "task consumer ready"], shown);
  t.regex(String(lines[0]?.["reason"]), /stream not found/);
  const attempts = lines.filter((l) => l.msg !== "task consumer ready").map((l) => Date.parse(String(l["time"])));
  t.true(attempts.length >= 3 && lines.filter((l) => l.level === "debug").length >= 2, "the retries are debug lines");
  const gaps = attempts.slice(1).map((at, i) => at - (attempts[i] ?? 0));
  t.true(gaps.every((gap) => gap >= 900), `one attempt a second, not a tight loop: gaps ${gaps.join(", ")} ms`);
});
