import { createHash } from "node:crypto";
import type { JetStreamManager, MsgRequest } from "@nats-io/jetstream";
import {
  decode,
  encode,
  resultBatchSubject,
  resultSubject,
  streams,
  taskMessageId,
  type DispatchRef,
  type ResultBatch,
  type TaskResult,
} from "@corral/contracts";

/**
 * Messages on the results stream: one dispatch's result on its own subject (`resultSubject`), or the results of
 * several dispatches of one plan together (a `ResultBatch` on `resultBatchSubject`).
 */

/** The results a results message holds: the batch's, or the one result. */
export function resultsOf(data: Uint8Array): TaskResult[] {
  const value = decode<TaskResult | ResultBatch>(data);
  return isBatch(value) ? value.results : [value];
}

function isBatch(value: unknown): value is ResultBatch {
  return typeof value === "object" && value !== null && Array.isArray((value as Partial<ResultBatch>).results);
}

/**
 * Subject, body and message id of a results message: a lone result on its own subject with its dispatch's id, several
 * of one plan as a batch whose id is made of all its dispatches, so the same message published again (a retry after
 * a lost acknowledgement) is dropped as a duplicate while a batch made up differently never is.
 */
export function resultsMessage(results: readonly TaskResult[]): { subject: string; data: Uint8Array; msgId: string } {
  const [first] = results;
  if (!first) throw new Error("resultsMessage: no results");
  if (results.length === 1) {
    return { subject: resultSubject(first.tenant, first.taskId, first.dispatch), data: encode(first), msgId: taskMessageId(first.taskId, first.dispatch) };
  }
  if (results.some((r) => r.tenant !== first.tenant || r.planId !== first.planId)) throw new Error("resultsMessage: a batch holds one plan's results");
  const keys = results.map((r) => taskMessageId(r.taskId, r.dispatch)).join(",");
  return {
    subject: resultBatchSubject(first.tenant, first.planId),
    data: encode({ results: [...results] } satisfies ResultBatch),
    msgId: `batch.${createHash("sha1").update(keys).digest("hex")}`,
  };
}

/**
 * Every stored result of a dispatch, oldest first: the messages on its own subject (the stream keeps each one: a
 * publish after the duplicate window is stored again), then the plan's batches that hold it. It reads the plan's
 * batches one by one: for tests and single lookups (a provisioner keeps its place per plan: result-lookup.ts).
 */
export async function storedResults(jsm: JetStreamManager, ref: DispatchRef, options: { first?: boolean } = {}): Promise<TaskResult[]> {
  const found = await ownResults(jsm, ref, options);
  if (options.first && found.length > 0) return found;
  for await (const batch of planBatches(jsm, ref)) {
    for (const r of batch.results) {
      if (r.taskId !== ref.taskId || r.dispatch !== ref.dispatch) continue;
      found.push(r);
      if (options.first) return found;
    }
  }
  return found;
}

/** The results stored on a dispatch's own subject, oldest first (with `first`, at most the oldest). */
export async function ownResults(jsm: JetStreamManager, ref: DispatchRef, options: { first?: boolean } = {}): Promise<TaskResult[]> {
  const found: TaskResult[] = [];
  const own = resultSubject(ref.tenant, ref.taskId, ref.dispatch);
  for (let m = await nextMessage(jsm, own, 1); m; m = await nextMessage(jsm, own, m.seq + 1)) {
    found.push(...resultsOf(m.data));
    if (options.first) break;
  }
  return found;
}

/** A plan's batches stored at stream sequence `fromSeq` or later, oldest first, read one by one. */
export async function* planBatches(
  jsm: JetStreamManager,
  plan: Pick<DispatchRef, "tenant" | "planId">,
  fromSeq = 1,
): AsyncGenerator<{ seq: number; results: TaskResult[] }> {
  // A task without a plan id (malformed) never had a success batched.
  if (typeof plan.planId !== "string" || plan.planId === "") return;
  const subject = resultBatchSubject(plan.tenant, plan.planId);
  for (let m = await nextMessage(jsm, subject, fromSeq); m; m = await nextMessage(jsm, subject, m.seq + 1)) {
    yield { seq: m.seq, results: resultsOf(m.data) };
  }
}

/** The stream API's message get (no direct-get setting needed on the stream); `undefined` past the last match. */
async function nextMessage(jsm: JetStreamManager, subject: string, seq: number): Promise<{ seq: number; data: Uint8Array } | undefined> {
  try {
    // STREAM.MSG.GET takes `next_by_subj` (nats-server 2.9+); nats.js types it for direct gets only.
    const m = await jsm.streams.getMessage(streams.results, { seq, next_by_subj: subject } as unknown as MsgRequest);
    return m ? { seq: m.seq, data: m.data } : undefined;
  } catch (err) {
    if ((err as { code?: unknown }).code === 10037 || /no message found/i.test(String((err as Error).message))) return undefined;
    throw err;
  }
}
