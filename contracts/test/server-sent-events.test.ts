import { isDeepStrictEqual } from "node:util";
import test from "ava";
import fc from "fast-check";
import { ServerSentEventParser, serverSentEvents, type ServerSentEvent } from "../src/server-sent-events.js";

const STREAM = [
  ": heartbeat",
  "",
  "id: 1",
  "event: task.ended",
  'data: {"n":1,',
  'data: "more":true}',
  "",
  "data:no space",
  "",
  "id: 2",
  "event: closing",
  "",
  "event: closing",
  "data",
  "",
  "data: unfinished",
];
const EXPECTED: ServerSentEvent[] = [
  { id: "1", event: "task.ended", data: '{"n":1,\n"more":true}' },
  { event: "message", data: "no space" },
  { event: "closing", data: "" },
];

test("server-sent events - fields, comments, multi-line data; an event without data and an unfinished one are not dispatched", (t) => {
  for (const newline of ["\n", "\r\n", "\r"]) {
    t.deepEqual(new ServerSentEventParser().push(STREAM.join(newline)), EXPECTED, JSON.stringify(newline));
  }
});

test("server-sent events - the same events however the text is cut into chunks (a CR LF cut in two included)", (t) => {
  const text = STREAM.join("\r\n");
  fc.assert(
    fc.property(fc.uniqueArray(fc.integer({ min: 1, max: text.length - 1 }), { maxLength: 20 }), (cuts) => {
      const parser = new ServerSentEventParser();
      const bounds = [0, ...cuts.sort((a, b) => a - b), text.length];
      const events = bounds.slice(1).flatMap((end, i) => parser.push(text.slice(bounds[i], end)));
      return isDeepStrictEqual(events, EXPECTED);
    }),
  );
  t.pass();
});

test("server-sent events - a response body's events, UTF-8 split across chunks", async (t) => {
  const bytes = new TextEncoder().encode('id: 7\ndata: {"name":"Zoë ✓"}\n\n');
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 3) controller.enqueue(bytes.subarray(i, i + 3));
      controller.close();
    },
  });
  const events: ServerSentEvent[] = [];
  for await (const e of serverSentEvents(body)) events.push(e);
  t.deepEqual(events, [{ id: "7", event: "message", data: '{"name":"Zoë ✓"}' }]);
});
