import type { NatsConnection } from "@nats-io/transport-node";
import {
  jetstream,
  jetstreamManager,
  type Consumer,
  type ConsumerMessages,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import {
  encode,
  ensureTaskConsumer,
  jsRequests,
  resultSubject,
  streams,
  taskMessageId,
  type Logger,
  type TaskMessage,
} from "@corral/shared";
import type { PluginSet } from "./plugin-set.js";
import { backoffMs, retryUntil, sleep } from "./retry.js";
import { parseTaskMessage } from "./task-message.js";
import { runTask } from "./task-runner.js";

export interface WorkerLoopDeps {
  nc: NatsConnection;
  tenant: string;
  provisionerId: string;
  workerId: string;
  plugins: PluginSet;
  workDir: string;
  log: Logger;
  now: () => number;
  /** How long one pull waits for a task, in ms (at least 1000). */
  pullExpiresMs: number;
  /** Interval of in-progress acks while a task runs, in ms. */
  progressMs: number;
  /** Aborted when the provisioner gives up waiting for running tasks: plugins are killed, tasks handed back. */
  hardStop: AbortSignal;
}

/** One worker of one tenant: pulls a task, runs it, publishes its result, acks; until stopped. */
export interface WorkerLoop {
  readonly tenant: string;
  readonly workerId: string;
  /** Asks the loop to end: an idle pull is cancelled, a running task finishes (and is reported) first. */
  stop(): void;
  /** Settles when the loop has ended. */
  readonly done: Promise<void>;
}

/** Starts a worker loop (see DESIGN.md "Provisioners" and shared/src/tasks.ts for the protocol). */
export function startWorkerLoop(deps: WorkerLoopDeps): WorkerLoop {
  const stopping = new AbortController();
  let pull: ConsumerMessages | undefined;
  const loop = new Loop(deps, stopping.signal, (p) => (pull = p));
  const done = loop.run().catch((err: unknown) => deps.log.error("worker loop crashed", { err }));
  return {
    tenant: deps.tenant,
    workerId: deps.workerId,
    stop() {
      if (stopping.signal.aborted) return;
      stopping.abort();
      // Closing an idle pull ends it now: the server drops a pull request nobody listens to any more.
      void pull?.close().catch(() => {});
    },
    done,
  };
}

class Loop {
  private readonly log: Logger;
  private consumer: Consumer | undefined;
  private jsm: JetStreamManager | undefined;
  private readonly js;

  constructor(
    private readonly deps: WorkerLoopDeps,
    private readonly stopping: AbortSignal,
    private readonly setPull: (p: ConsumerMessages | undefined) => void,
  ) {
    this.log = deps.log.child({ tenant: deps.tenant, worker: deps.workerId });
    this.js = jetstream(deps.nc);
  }

  async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping.aborted && !this.deps.hardStop.aborted) {
      let msg: JsMsg | undefined;
      try {
        msg = await this.pullOne();
        failures = 0;
      } catch (err) {
        failures++;
        this.consumer = undefined;
        this.log.warn("pulling a task failed; retrying", { err, failures });
        await sleep(backoffMs(failures, 250, 2_000), this.stopping);
        continue;
      }
      if (!msg) continue;
      if (this.stopping.aborted) {
        // Arrived while stopping: hand it straight back to another worker.
        try {
          msg.nak();
        } catch (err) {
          this.log.warn("could not hand a task back; it is redelivered after its ack wait", { err });
        }
        break;
      }
      try {
        await this.handle(msg);
      } catch (err) {
        // Only the connection closing under us gets here; the task is redelivered after its ack wait.
        this.log.error("handling a task failed", { err });
      }
    }
  }

  private async pullOne(): Promise<JsMsg | undefined> {
    if (!this.consumer) {
      const name = await ensureTaskConsumer(this.deps.nc, this.deps.tenant);
      this.consumer = await this.js.consumers.get(streams.tasks, name);
    }
    if (this.stopping.aborted) return undefined;
    const messages = await this.consumer.fetch({ max_messages: 1, expires: this.deps.pullExpiresMs });
    this.setPull(messages);
    try {
      if (this.stopping.aborted) await messages.close();
      for await (const m of messages) return m;
      return undefined;
    } finally {
      this.setPull(undefined);
    }
  }

  private async handle(msg: JsMsg): Promise<void> {
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

  private async process(msg: JsMsg, task: TaskMessage, log: Logger): Promise<void> {
    const { deps } = this;
    const subject = resultSubject(deps.tenant, task.taskId, task.dispatch);
    const onError = (what: string) => (err: unknown, attempt: number) =>
      log.warn(`${what} failed; retrying`, { err, attempt });

    // A redelivery, or a dispatch the clusters service republished after a crash (possibly after the task
    // stream's duplicate window, so as a new message), may have run already: then its result exists.
    if (msg.info.deliveryCount > 1 || msg.redelivered || task.republished === true) {
      const found = await retryUntil(() => this.resultExists(subject), deps.hardStop, onError("looking up the result"));
      if (!found.ok) return msg.nak();
      if (found.value) {
        log.info("task already has a result; acking without running it", { deliveryCount: msg.info.deliveryCount });
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
    const published = await retryUntil(
      () => jsRequests(deps.nc).publish(subject, encode(result), { msgId: taskMessageId(task.taskId, task.dispatch) }),
      deps.hardStop,
      onError("publishing the result"),
    );
    if (!published.ok) {
      log.warn("stopped before the result was published; handing the task back");
      return msg.nak();
    }
    // Thousands of tasks a second are possible: successes only at debug level.
    (result.status === 0 ? log.debug : log.info)("task done", { status: result.status, ms: result.endTime - result.startTime });
    this.ack(msg, log);
  }

  private async resultExists(subject: string): Promise<boolean> {
    this.jsm ??= await jetstreamManager(this.deps.nc);
    try {
      return (await this.jsm.streams.getMessage(streams.results, { last_by_subj: subject })) !== null;
    } catch (err) {
      if ((err as { code?: unknown }).code === 10037 || /no message found/i.test(String((err as Error).message))) {
        return false;
      }
      throw err;
    }
  }

  /** Unconfirmed: the result is stored already, so a lost ack only means a redelivery that finds it and acks. */
  private ack(msg: JsMsg, log: Logger): void {
    try {
      msg.ack();
    } catch (err) {
      log.warn("ack failed", { err });
    }
  }
}
