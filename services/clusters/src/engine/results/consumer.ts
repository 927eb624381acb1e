import { RESULTS_ACK_WAIT_MS } from "@corral/contracts";
import { resultsOf } from "@corral/shared";
import type { ReadingDeps } from "../../adapters/deps.js";
import { openResultsStream, type ResultsMessage } from "../../adapters/results-stream.js";
import { createResultApplier, newResultLookups, type PlanDelivery, type PreparedResult } from "./apply.js";
import { BATCH, runBatches } from "./batches.js";

export interface ResultsConsumer {
  stop(): Promise<void>;
}

/** A results message as received (one result, or a provisioner's batch): failures announced at once, applied with its batch. */
interface Received {
  msg: ResultsMessage;
  prepared: Promise<PreparedResult[]>;
}

/**
 * Reads task results in batches: a failure is announced as it arrives (`task.ended`); then, with its batch, each
 * result is merged into its node (idempotent per dispatch), every plan's results are applied to its actor in one
 * compare-and-set, whose `plan.progress` carries the successes' `task.ended` events (see `planWriteEvents`),
 * and the batch is acked. A crash before the ack redelivers the batch, which changes nothing the second time and
 * announces its results again (a repeated announcement is dropped by its message id).
 */
export async function startResultsConsumer(deps: ReadingDeps, delivery: PlanDelivery): Promise<ResultsConsumer> {
  const results = await openResultsStream(deps.nc);
  const applier = createResultApplier(deps, delivery);
  let lookups = newResultLookups(deps);

  const receive = (msg: ResultsMessage): Received => {
    const prepared = Promise.resolve().then(() => Promise.all(resultsOf(msg.data).map((r) => applier.prepare(r, lookups))));
    // Awaited with its batch (which fails and is redelivered if this did).
    prepared.catch(() => {});
    return { msg, prepared };
  };

  /**
   * Every result received and not yet acked or handed back, in a batch or still queued behind one: progress acks
   * keep them all, or a slow spell (a busy machine, fsync on every write) would have the server deliver the queued
   * ones again, to this instance or another, and the repeats would make the spell longer.
   */
  const unsettled = new Set<ResultsMessage>();
  const progress = setInterval(() => {
    for (const m of unsettled) m.working();
  }, RESULTS_ACK_WAIT_MS / 3);
  progress.unref();

  const applyAndAck = async (received: Received[]) => {
    const messages = received.map((r) => r.msg);
    let prepared: PreparedResult[][];
    try {
      prepared = await Promise.all(received.map((r) => r.prepared));
      await applier.applyBatch(prepared.flat(), lookups);
      for (const m of messages) {
        m.ack();
        unsettled.delete(m);
      }
    } finally {
      lookups = newResultLookups(deps);
    }
    // The stored copy has them redacted; the raw message would otherwise keep them on the stream for days.
    const showedSecrets = messages.filter((_, i) => prepared[i]?.some((p) => p.showedSecrets));
    await results.erase(showedSecrets.map((m) => m.seq));
  };

  const batches = runBatches<Received>((batch) =>
    applyAndAck(batch).catch((err: unknown) => {
      deps.log.warn("results batch failed; it will be redelivered", { err });
      for (const r of batch) {
        r.msg.nak(1000);
        unsettled.delete(r.msg);
      }
    }),
  );

  // consume() streams messages as they come; batches are whatever has arrived while the last batch ran.
  const stream = await results.consume(BATCH * 2);
  const feeding = (async () => {
    for await (const m of stream) {
      unsettled.add(m);
      batches.queue.push(receive(m));
    }
  })().catch((err: unknown) => deps.log.error("results stream ended", { err }));

  return {
    async stop() {
      await batches.stop();
      clearInterval(progress);
      await stream.close().catch(() => {});
      await feeding;
    },
  };
}
