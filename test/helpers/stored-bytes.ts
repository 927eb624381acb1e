/** Looks through everything JetStream stores (every stream, every kept message and KV revision) for a value. */
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";

/**
 * Every stored message, in any stream (KV buckets and object stores included, with their kept history), whose
 * data or headers contain `needle` (msgpack keeps strings as UTF-8 bytes), as `<stream>#<seq> <subject>`.
 */
export async function storedMessagesContaining(nc: NatsConnection, needle: string): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const wanted = Buffer.from(needle, "utf8");
  const found: string[] = [];
  for await (const info of jsm.streams.list()) {
    const { first_seq: first, last_seq: last, messages } = info.state;
    if (messages === 0) continue;
    for (let seq = first; seq <= last; seq++) {
      const m = await jsm.streams.getMessage(info.config.name, { seq }).catch(() => null);
      if (!m) continue;
      const headers = m.header ? [...m.header.keys()].flatMap((k) => m.header.values(k)).join("\n") : "";
      if (Buffer.from(m.data).includes(wanted) || headers.includes(needle)) found.push(`${info.config.name}#${seq} ${m.subject}`);
    }
  }
  return found;
}
