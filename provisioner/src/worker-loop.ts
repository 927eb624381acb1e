import type { TaskMessage, TaskResult } from "@corral/contracts";
import { retryUntil, type Logger } from "@corral/shared";
import type { PluginSet } from "./plugin-set.js";
import type { ResultBatcher } from "./result-batcher.js";
import type { ResultLookup } from "./result-lookup.js";
import { parseTaskMessage } from "./task-message.js";
import type { TaskDelivery, TaskFeed } from "./task-feed.js";
import { runTask } from "./task-runner.js";

/**
 * A delivery this soon after its dispatch runs without looking for an earlier result first: it cannot have run
 * elsewhere yet in a way its delivery count would not show (a consumer leader election takes longer).
 */
const FRESH_DELIVERY_MS = 1_000;

export interface WorkerLoopDeps {
  tenant: string;
  provisionerId: string;
  workerId: string;
  /** Where this tenant's idle workers wait for tasks (one per tenant, shared by its loops). */
  feed: TaskFeed;
  /** Publishes results (the provisioner's one batcher). */
  results: ResultBatcher;
  /** Finds whether a dispatch already has a result (the provisioner's one lookup). */
  lookup: ResultLookup;
  plugins: PluginSet;
  workDir: string;
  log: Logger;
  now: () => number;
  /** Interval of in-progress acks while a task runs, in ms. */
  progressMs: number;
  /** Aborted when the provisioner gives up waiting for running tasks: plugins are killed, tasks handed back. */
  hardStop: AbortSignal;
  /** Told of every task run here before its result is published (health targets); must not throw. */
  afterTask?: (task: TaskMessage, result: TaskResult) => Promise<void>;
}

/** One worker of one tenant: pulls a task, runs it, publishes its result, acks; until stopped. */
export interface WorkerLoop {
  readonly tenant: string;
  readonly workerId: string;
  /** Asks the loop to end: an idle worker stops waiting at once, a running task finishes (and is reported) first. */
  stop(): void;
  /** True while the loop handles a task (from its delivery to its ack), false while it waits for one. */
  readonly isBusy: boolean;
  /** Settles when the loop has ended. */
  readonly done: Promise<void>;
}

/** Starts a worker loop (the protocol: docs/architecture.md, Task protocol, and shared/src/tasks.ts). */
export function startWorkerLoop(deps: WorkerLoopDeps): WorkerLoop {
  const stopping = new AbortController();
  const loop = new Loop(deps, stopping.signal);
  const done = loop.run().catch((err: unknown) => deps.log.error("worker loop crashed", { err }));
  return {
    tenant: deps.tenant,
    workerId: deps.workerId,
    get isBusy() {
      return loop.isBusy;
    },
    stop() {
      // An idle worker stops waiting at once; a task arriving for it afterwards goes back to the queue.
      stopping.abort();
    },
    done,
  };
}

class Loop {
  private readonly log: Logger;
  isBusy = false;

  constructor(
    private readonly deps: WorkerLoopDeps,
    private readonly stopping: AbortSignal,
  ) {
    this.log = deps.log.child({ tenant: deps.tenant, worker: deps.workerId });
  }

  async run(): Promise<void> {
    while (!this.stopping.aborted && !this.deps.hardStop.aborted) {
      const msg = await this.deps.feed.next(this.stopping);
      if (!msg) continue;
      if (this.stopping.aborted) {
        msg.nak(); // arrived while stopping: straight back to another worker
        break;
      }
      this.isBusy = true;
      try {
        await this.handle(msg);
      } catch (err) {
        // Only the connection closing under us gets here; the task is redelivered after its ack wait.
        this.log.error("handling a task failed", { err });
      } finally {
        this.isBusy = false;
      }
    }
  }

  private async handle(msg: TaskDelivery): Promise<void> {
    const parsed = parseTaskMessage(msg.data);
    if (!parsed.ok) {
      // Nothing to report a result under; redelivering it would fail the same way forever.
      this.log.error("dropping a malformed task", { reason: parsed.reason, seq: msg.seq });
      msg.term();
      return;
    }
    const task = parsed.task;
    if (task.tenant !== this.deps.tenant) {
      this.log.warn("task names another tenant; reporting it under the subject's tenant", { taskTenant: task.tenant });
    }
    const log = this.log.child({ taskId: task.taskId, dispatch: task.dispatch, taskName: task.taskName });
    const progress = setInterval(() => {
      try {
        msg.working();
      } catch (err) {
        log.warn("in-progress ack failed", { err });
      }
    }, this.deps.progressMs);
    try {
      await this.process(msg, task, log);
    } finally {
      clearInterval(progress);
    }
  }

  private async process(msg: TaskDelivery, task: TaskMessage, log: Logger): Promise<void> {
    const { deps } = this;
    const onError = (what: string) => (err: unknown, attempt: number) =>
      log.warn(`${what} failed; retrying`, { err, attempt });

    // A redelivery, or a dispatch the clusters service republished after a crash (possibly after the task
    // stream's duplicate window, so as a new message), may have run already: then its result exists. So may a
    // delivery that is not fresh although its count says first: a consumer whose leader moved to another NATS node
    // before the acks reached the others delivers again from 1, and a process stopped or starved past the ack wait
    // still holds deliveries the server has meanwhile given to another worker.
    if (msg.deliveryCount > 1 || task.republished === true || deps.now() - task.submitTime > FRESH_DELIVERY_MS) {
      const found = await retryUntil(
        () => deps.lookup.hasResult({ tenant: deps.tenant, planId: task.planId, taskId: task.taskId, dispatch: task.dispatch }),
        deps.hardStop,
        onError("looking up the result"),
      );
      if (!found.ok) return msg.nak();
      if (found.value) {
        log.info("task already has a result; acking without running it", { deliveryCount: msg.deliveryCount });
        return this.ack(msg, log);
      }
    }

    log.debug("running task");
    const result = await runTask(task, {
      plugins: deps.plugins,
      tenant: deps.tenant,
      workDir: deps.workDir,
      provisionerId: deps.provisionerId,
      workerId: deps.workerId,
      signal: deps.hardStop,
      log,
      now: deps.now,
    });
    if (deps.hardStop.aborted) {
      log.warn("stopped before the task finished; handing it back");
      return msg.nak();
    }
    await deps.afterTask?.(task, result);
    const published = await retryUntil(() => deps.results.publish(result), deps.hardStop, onError("publishing the result"));
    if (!published.ok) {
      log.warn("stopped before the result was published; handing the task back");
      return msg.nak();
    }
    // Thousands of tasks a second are possible: successes only at debug level.
    const done = { status: result.status, ms: result.endTime - result.startTime };
    if (result.status === 0) log.debug("task done", done);
    else log.info("task done", done);
    this.ack(msg, log);
  }

  /** Unconfirmed: the result is stored already, so a lost ack only means a redelivery that finds it and acks. */
  private ack(msg: TaskDelivery, log: Logger): void {
    try {
      msg.ack();
    } catch (err) {
      log.warn("ack failed", { err });
    }
  }
}
