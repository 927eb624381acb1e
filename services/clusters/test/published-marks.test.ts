/** The held `dispatch.published` marks (src/actor/published-marks.ts): written alone only when no write took them in time. */
import test from "ava";
import { silentLogger } from "@corral/shared";
import { createPublishedMarks } from "../src/actor/published-marks.js";
import type { PlanRef } from "../src/domain/records.js";

const mark = (stage: number) => ({ type: "dispatch.published" as const, stages: [stage], tasks: [] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("published marks - a mark taken by a write is not written again; one left alone is written after the delay", async (t) => {
  const written: PlanRef[] = [];
  const marks = createPublishedMarks(async (ref) => void written.push(ref), silentLogger, 30);
  const a = { clusterId: "c1", planId: "c1-001" };
  const b = { clusterId: "c2", planId: "c2-001" };
  marks.add(a, mark(0));
  marks.add(a, mark(1));
  marks.add(b, mark(0));
  t.deepEqual(marks.take(a), [mark(0), mark(1)], "both of a's marks, in order");
  t.deepEqual(marks.take(a), [], "taken once");
  await sleep(80);
  t.deepEqual(written, [b], "only b's mark, which nothing took, was written");
});

test("published marks - flushAll writes every held mark at once", async (t) => {
  const written: string[] = [];
  const marks = createPublishedMarks(async (ref) => void written.push(ref.planId), silentLogger, 60_000);
  marks.add({ clusterId: "c1", planId: "p1" }, mark(0));
  marks.add({ clusterId: "c2", planId: "p2" }, mark(0));
  await marks.flushAll();
  t.deepEqual(written.sort(), ["p1", "p2"]);
});
