import { createServer, get, type Server } from "node:http";
import test from "ava";
import { silentLogger } from "@corral/shared";
import { freePort } from "@corral/deploy";
import { listenOnSharedPort } from "../src/shared-port.js";
import { eventually } from "../../../test/helpers/eventually.js";

/** An HTTP server answering its own name. */
const named = (name: string): Server => createServer((_req, res) => res.end(name));

/** GET / on a connection of its own: the name of the server that answered. */
const answerOn = (port: number) =>
  new Promise<string>((resolve, reject) => {
    get({ host: "127.0.0.1", port, path: "/", agent: false }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve(body));
    }).on("error", reject);
  });

test("shared port - two instances on one port: both listen where Node shares ports, else the second takes over when the first ends", async (t) => {
  const port = await freePort();
  const first = named("first");
  const second = named("second");
  const a = await listenOnSharedPort(first, port, "127.0.0.1", silentLogger);
  const b = await listenOnSharedPort(second, port, "127.0.0.1", silentLogger);
  t.teardown(() => {
    a.stop();
    b.stop();
    first.close();
    second.close();
  });
  t.is(a.port, port);
  t.is(b.port, port);
  t.true(a.listening());
  t.log(`Node ${process.version}: the second instance ${b.listening() ? "shares the port" : "stands by"}`);
  t.regex(await answerOn(port), /^(first|second)$/);

  first.close();
  first.closeAllConnections();
  await eventually(async () => (await answerOn(port)) === "second", { what: "the second instance to answer on the port", timeoutMs: 5_000 });
  t.true(b.listening());
});

test("shared port - port 0 (any free port) gets a port of its own and listens at once", async (t) => {
  const any = named("any");
  const free = await listenOnSharedPort(any, 0, "127.0.0.1", silentLogger);
  t.teardown(() => any.close());
  t.not(free.port, 0);
  t.true(free.listening());
  t.is(await answerOn(free.port), "any");
});
