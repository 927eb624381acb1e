import anyTest, { type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { startNats, type NatsHandle } from "@corral/deploy";
import { connectNats } from "@corral/shared";

export interface NatsContext {
  nats: NatsHandle;
  nc: NatsConnection;
}

/**
 * The `test` of a file whose tests share one nats-server with JetStream (lazy fsync) and one connection named
 * `name`: started before the first test (then `setup` runs on the connection), stopped after the last.
 */
export function testWithNats(name: string, setup?: (nc: NatsConnection) => Promise<unknown>): TestFn<NatsContext> {
  const test = anyTest as TestFn<NatsContext>;
  test.before(async (t) => {
    t.context.nats = await startNats({ jetstream: true, syncAlways: false });
    t.context.nc = await connectNats({ url: t.context.nats.url, name });
    await setup?.(t.context.nc);
  });
  test.after.always(async (t) => {
    await t.context.nc?.drain();
    await t.context.nats?.stop();
  });
  return test;
}
