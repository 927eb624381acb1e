/** The chaos checker's rule for failed plans: tasks from the failed stage on never ran by design and are not lost. */
import test from "ava";
import { failedStageStart } from "../helpers/chaos/checker.js";
import type { PlanRecord } from "../helpers/cluster-state.js";

const plan = (value: string, failureIndex: number | undefined, stageSizes: number[]) =>
  ({
    stageSizes,
    actor: { value, context: { failure: failureIndex === undefined ? null : { index: failureIndex, taskName: "INSTALL", message: "boom" } } },
  }) as unknown as PlanRecord;

test("chaos checker - a failed plan stops at the first task of its failed stage; other plans at none", (t) => {
  t.is(failedStageStart(plan("failed", 0, [2, 3, 1])), 0);
  t.is(failedStageStart(plan("failed", 1, [2, 3, 1])), 0);
  t.is(failedStageStart(plan("failed", 2, [2, 3, 1])), 2);
  t.is(failedStageStart(plan("failed", 4, [2, 3, 1])), 2);
  t.is(failedStageStart(plan("failed", 5, [2, 3, 1])), 5);
  t.is(failedStageStart(plan("succeeded", undefined, [2, 3, 1])), undefined);
  t.is(failedStageStart(plan("running", 3, [2, 3, 1])), undefined, "only a plan that ended failed");
});
