import { jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { streams } from "@corral/contracts";
import { ensureResultsConsumer } from "@corral/shared";

/** One message of the results stream: a task result, or a provisioner's batch of them. */
export type ResultsMessage = JsMsg;

/** `CORRAL_RESULTS` as this service reads it: through one durable consumer every instance shares. */
export interface ResultsStream {
  /** Delivers messages as they come, up to `maxMessages` held unacknowledged. */
  consume(maxMessages: number): Promise<ConsumerMessages>;
  /** Erases stored messages by sequence (overwritten on disk, not only marked deleted). Best effort. */
  erase(sequences: readonly number[]): Promise<void>;
}

export async function openResultsStream(nc: NatsConnection): Promise<ResultsStream> {
  const name = await ensureResultsConsumer(nc);
  const consumer = await jetstream(nc).consumers.get(streams.results, name);
  return {
    consume: (maxMessages) => consumer.consume({ max_messages: maxMessages }),
    async erase(sequences) {
      if (sequences.length === 0) return;
      const jsm = await jetstreamManager(nc);
      for (const seq of sequences) await jsm.streams.deleteMessage(streams.results, seq, true).catch(() => {});
    },
  };
}
