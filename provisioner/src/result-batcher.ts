import type { NatsConnection } from "@nats-io/transport-node";
import { MAX_RESULT_BATCH, type TaskResult } from "@corral/contracts";
import { jsRequests, resultsMessage } from "@corral/shared";

/**
 * After a plan's first success is handed over, its siblings ending within this long join it in one message. A
 * stage's tasks are dispatched together and mostly end together; the wait is short next to a task.
 */
const LINGER_MS = 2;

/** Publishes results; resolves once the result is stored (rejects when its message could not be published). */
export interface ResultBatcher {
  publish(result: TaskResult): Promise<void>;
}

interface Pending {
  results: TaskResult[];
  waiters: Array<{ resolve(): void; reject(err: unknown): void }>;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * One per provisioner. A failure is published alone, on its dispatch's own subject, at once: the clusters service
 * announces it the moment it arrives, and a failure's output may hold secrets the clusters service erases from the
 * stream after applying it. Successes of one plan that end within {@link LINGER_MS} of each other are published as
 * one batch (result-messages.ts): one stored message, one fsync with `sync_interval: always`, instead of one each.
 * A lone success is published as a plain result. Every worker waits for its result's message to be stored before it
 * acks its task, so a crash in between leaves the task to be delivered again, and the worker that gets it finds the
 * result (`hasStoredResult`). A failed publish fails every result of its message: each worker retries its own.
 */
export function createResultBatcher(nc: NatsConnection): ResultBatcher {
  const js = jsRequests(nc);
  const pending = new Map<string, Pending>();

  const send = async (results: readonly TaskResult[]) => {
    const { subject, data, msgId } = resultsMessage(results);
    await js.publish(subject, data, { msgId });
  };

  const flush = (key: string) => {
    const group = pending.get(key);
    if (!group) return;
    pending.delete(key);
    if (group.timer) clearTimeout(group.timer);
    send(group.results).then(
      () => group.waiters.forEach((w) => w.resolve()),
      (err: unknown) => group.waiters.forEach((w) => w.reject(err)),
    );
  };

  return {
    publish(result) {
      if (result.status !== 0 || typeof result.planId !== "string" || result.planId === "") return send([result]);
      const key = `${result.tenant}\u0000${result.planId}`;
      return new Promise<void>((resolve, reject) => {
        let group = pending.get(key);
        if (!group) {
          group = { results: [], waiters: [], timer: undefined };
          pending.set(key, group);
          group.timer = setTimeout(() => flush(key), LINGER_MS);
        }
        group.results.push(result);
        group.waiters.push({ resolve, reject });
        if (group.results.length >= MAX_RESULT_BATCH) flush(key);
      });
    },
  };
}
