import type { JetStreamManager } from "@nats-io/jetstream";
import { taskMessageId, type DispatchRef } from "@corral/contracts";
import { BoundedCache, ownResults, planBatches } from "@corral/shared";

/** Plans whose batches a provisioner remembers having read (least recently used dropped). */
const PLANS_KEPT = 512;

/** Where the reading of one plan's batches stands. */
interface PlanScan {
  /** The stream sequence to read on from. */
  nextSeq: number;
  /** Dispatches (`<taskId>.<dispatch>`) seen in the batches read so far. */
  found: Set<string>;
  /** The read in progress: one at a time per plan. */
  reading: Promise<void>;
}

/** Whether a dispatch already has a stored result (the check before running a redelivered task). */
export interface ResultLookup {
  hasResult(ref: DispatchRef): Promise<boolean>;
}

/**
 * One per provisioner. A dispatch's result is on its own subject or in one of its plan's batches
 * (shared/src/result-messages.ts). Under load many of a large plan's tasks are checked (every delivery more than a
 * second after its dispatch is), so the batches of a plan are read once, from where the last check of that plan
 * stopped to the stream's end, not from the start each time.
 */
export function createResultLookup(jsm: () => Promise<JetStreamManager>): ResultLookup {
  const plans = new BoundedCache<string, PlanScan>({ maxEntries: PLANS_KEPT });
  return {
    async hasResult(ref) {
      const js = await jsm();
      if ((await ownResults(js, ref, { first: true })).length > 0) return true;
      const key = `${ref.tenant}\u0000${ref.planId}`;
      let scan = plans.get(key);
      if (!scan) plans.set(key, (scan = { nextSeq: 1, found: new Set(), reading: Promise.resolve() }));
      const plan = scan;
      const read = plan.reading.then(async () => {
        for await (const batch of planBatches(js, ref, plan.nextSeq)) {
          for (const r of batch.results) plan.found.add(taskMessageId(r.taskId, r.dispatch));
          plan.nextSeq = batch.seq + 1;
        }
      });
      plan.reading = read.catch(() => {});
      await read;
      return plan.found.has(taskMessageId(ref.taskId, ref.dispatch));
    },
  };
}
