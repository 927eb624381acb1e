/**
 * The Server-Sent Events reader against a real HTTP server: events are parsed as sent (ids, types, multi-line
 * data, comments), and a stream the server ends is resumed with `Last-Event-ID`, so nothing is missed or repeated.
 */
import test from "ava";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { ServerSentEvent } from "@corral/contracts";
import { readEventStream } from "../src/http/event-stream.js";

test("event stream - a closed stream is resumed after the last id, and an error answer ends it", async (t) => {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    const after = Number(req.headers["last-event-id"] ?? 0);
    if (after >= 4) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ status: 404, error: "not_found", message: "gone" }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    // Two events per connection, then the server closes it, as the gateway does with a client it drops.
    res.write(": heartbeat\n\n");
    res.write(`id: ${after + 1}\nevent: task.ended\ndata: {"n":${after + 1},\ndata: "second line":true}\n\n`);
    res.end(`id: ${after + 2}\r\nevent: closing\r\ndata: {"reason":"too_slow"}\r\n\r\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;

  const events: ServerSentEvent[] = [];
  const error = await t.throwsAsync(async () => {
    for await (const event of readEventStream(url, { headers: { "Service-UserID": "alice" }, reconnectDelayMs: 10 })) events.push(event);
  });
  t.is(error?.message, "gone", "the error answer's message");
  t.deepEqual(
    events.map((e) => `${e.id} ${e.event}`),
    ["1 task.ended", "2 closing", "3 task.ended", "4 closing"],
  );
  t.deepEqual(JSON.parse(events[0]?.data ?? ""), { n: 1, "second line": true });
  t.deepEqual(
    seen.map((h) => [h["last-event-id"], h["accept"], h["service-userid"]]),
    [
      [undefined, "text/event-stream", "alice"],
      ["2", "text/event-stream", "alice"],
      ["4", "text/event-stream", "alice"],
    ],
  );
});
