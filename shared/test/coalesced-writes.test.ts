/**
 * Coalesced writes (shared/src/coalesced-writes.ts) over a real nats-server: what a connection publishes in one
 * event-loop turn goes to the socket in one write, in order, and nothing buffered is lost on close. The socket
 * writes are counted by watching `net.Socket#write` for sockets to the server's port, so the tests run one at a time.
 */
import { Socket } from "node:net";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "@corral/shared";
import { testWithNats } from "../../test/helpers/nats-test.js";

const test = testWithNats("coalesced-writes-test");

/** Counts `net.Socket#write` calls on sockets to `port` while `during` runs. */
async function socketWrites(port: number, during: () => Promise<void>): Promise<number> {
  const write = Socket.prototype.write;
  let writes = 0;
  Socket.prototype.write = function (this: Socket, ...args: unknown[]) {
    if (this.remotePort === port) writes++;
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof write;
  try {
    await during();
  } finally {
    Socket.prototype.write = write;
  }
  return writes;
}

/** 50 publishes in one turn, each after a microtask checkpoint (as 50 request handlers that awaited would). */
async function publishAcrossCheckpoints(nc: NatsConnection, subject: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    nc.publish(subject, String(i));
    await Promise.resolve();
  }
}

async function received(nc: NatsConnection, subject: string, count: number): Promise<{ next: () => Promise<string[]> }> {
  // No `max`: the listener's own UNSUB would be counted as a write to the server.
  const sub = nc.subscribe(subject);
  await nc.flush();
  return {
    next: async () => {
      const got: string[] = [];
      for await (const m of sub) {
        got.push(m.string());
        if (got.length === count) break;
      }
      return got;
    },
  };
}

test.serial("coalesced writes - 50 publishes of one turn leave in one write, in order; nats.js alone writes each", async (t) => {
  const { nats, nc: listener } = t.context;
  const port = Number(new URL(nats.url).port);
  const coalesced = await connectNats({ url: nats.url, name: "coalescing" });
  const plain = await connect({ servers: nats.url, name: "plain" });
  t.teardown(() => Promise.all([coalesced.close(), plain.close()]).then(() => {}));

  const inbox = await received(listener, "cw.one-turn", 50);
  const coalescedWrites = await socketWrites(port, async () => {
    await publishAcrossCheckpoints(coalesced, "cw.one-turn");
    await new Promise((resolve) => setImmediate(resolve));
  });
  t.is(coalescedWrites, 1);
  t.deepEqual(await inbox.next(), Array.from({ length: 50 }, (_, i) => String(i)));

  // The control: the same publishes on a connection as nats.js makes it write about once each.
  const plainWrites = await socketWrites(port, async () => {
    await publishAcrossCheckpoints(plain, "cw.plain");
    await new Promise((resolve) => setImmediate(resolve));
  });
  t.true(plainWrites >= 25, `nats.js alone wrote ${plainWrites} times`);
});

test.serial("coalesced writes - a publish past nats.js's buffer limit (32 KiB) is written at once", async (t) => {
  const { nats } = t.context;
  const port = Number(new URL(nats.url).port);
  const nc = await connectNats({ url: nats.url, name: "coalescing-large" });
  t.teardown(() => nc.close());
  const writes = await socketWrites(port, async () => {
    nc.publish("cw.large", "x");
    nc.publish("cw.large", new Uint8Array(40 * 1024));
  });
  t.is(writes, 1, "written before the publish returned, both messages together");
});

test.serial("coalesced writes - close() right after publishing still delivers what was buffered", async (t) => {
  const { nats, nc: listener } = t.context;
  const inbox = await received(listener, "cw.close", 3);
  const nc = await connectNats({ url: nats.url, name: "coalescing-close" });
  for (const word of ["a", "b", "c"]) nc.publish("cw.close", word);
  await nc.close();
  t.deepEqual(await inbox.next(), ["a", "b", "c"]);
});

test.serial("coalesced writes - requests and replies across a service still work when many are in flight", async (t) => {
  const { nats } = t.context;
  const server = await connectNats({ url: nats.url, name: "coalescing-server" });
  const client = await connectNats({ url: nats.url, name: "coalescing-client" });
  t.teardown(() => Promise.all([server.close(), client.close()]).then(() => {}));
  server.subscribe("cw.double", {
    callback: (_e, m) => {
      void Promise.resolve().then(() => m.respond(String(Number(m.string()) * 2)));
    },
  });
  await server.flush();
  const answers = await Promise.all(Array.from({ length: 500 }, (_, i) => client.request("cw.double", String(i)).then((m) => m.string())));
  t.deepEqual(answers, Array.from({ length: 500 }, (_, i) => String(i * 2)));
});
