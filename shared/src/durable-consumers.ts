import type { NatsConnection } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager, type Consumer, type ConsumerConfig, type JsMsg } from "@nats-io/jetstream";
import type { Logger } from "./log.js";
import { sleep } from "./retry.js";

/** What a durable pull consumer is made with: explicit acks and no limit on deliveries unless said otherwise. */
export type DurableConsumerConfig = Partial<ConsumerConfig> & { durable_name: string };

/**
 * Creates the durable consumer `config.durable_name` on `stream` unless it exists, and returns its name: create only,
 * no handle asked for (no request beyond finding or making it). Instances that race to create it all succeed: one
 * creates it, the others find it.
 */
export async function createDurableConsumer(nc: NatsConnection, stream: string, config: DurableConsumerConfig): Promise<string> {
  const jsm = await jetstreamManager(nc);
  const name = config.durable_name;
  await createUnlessFound(
    () => jsm.consumers.info(stream, name),
    () => jsm.consumers.add(stream, { ack_policy: AckPolicy.Explicit, max_deliver: -1, ...config }),
  );
  return name;
}

/**
 * Runs `create` unless `find` succeeds (a JetStream stream or consumer). A `create` that fails counts as done when
 * `find` then succeeds: another instance created it in between.
 */
export async function createUnlessFound(find: () => Promise<unknown>, create: () => Promise<unknown>): Promise<void> {
  if (await find().then(() => true, () => false)) return;
  await create().catch(async (err: unknown) => {
    await find().catch(() => {
      throw err;
    });
  });
}

/** createDurableConsumer, then the consumer's handle for pulling. */
export async function ensureDurableConsumer(nc: NatsConnection, stream: string, config: DurableConsumerConfig): Promise<Consumer> {
  return jetstream(nc).consumers.get(stream, await createDurableConsumer(nc, stream, config));
}

export interface BatchLoopOptions {
  /** The consumer to pull from; asked again after an interruption (it may have been deleted meanwhile). */
  consumer: () => Promise<Consumer>;
  /** Handles one pulled batch (never empty); acks and naks are its own. */
  handle: (messages: JsMsg[]) => Promise<void>;
  /** Messages per pull. */
  batchSize: number;
  /** How long one pull waits for more messages, ms (at least 1000). */
  expiresMs: number;
  /** Before each pull: true ends the pull from this consumer and asks `consumer` again. @default never */
  restart?: () => Promise<boolean>;
  log: Logger;
  /** Names the loop in the log line of an interruption (`node event feed`). */
  name: string;
}

export interface BatchLoop {
  /** Ends the loop after the batch in hand. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Pulls batches from a durable consumer until stopped: a batch is handled whole before the next pull, and an
 * interruption (the server restarted, the consumer was deleted) is logged and retried a second later.
 */
export function pullBatches(options: BatchLoopOptions): BatchLoop {
  const { handle, batchSize, log, name } = options;
  const expires = Math.max(1000, options.expiresMs);
  const restart = options.restart ?? (async () => false);
  let running = true;
  let current: { close(): Promise<void | Error> } | undefined;
  const loop = (async () => {
    while (running) {
      try {
        const consumer = await options.consumer();
        while (running && !(await restart())) {
          const batch = await consumer.fetch({ max_messages: batchSize, expires });
          current = batch;
          const messages: JsMsg[] = [];
          for await (const m of batch) messages.push(m);
          current = undefined;
          if (messages.length > 0) await handle(messages);
        }
      } catch (err) {
        if (!running) break;
        log.warn(`${name} interrupted; retrying`, { err });
        await sleep(1000);
      }
    }
  })();
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        running = false;
        await current?.close().catch(() => {});
        await loop;
      })();
      return stopping;
    },
  };
}
