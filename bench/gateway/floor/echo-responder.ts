/**
 * The service side of the floor: answers each request on FLOOR_SUBJECT with the canned reply of its path (the
 * real pipeline's answer to the same request, so both carry the same bytes back), or with the request itself.
 * A process of its own, started by throughput.ts. Env: BENCH_NATS_URL, BENCH_FLOOR_REPLIES (a JSON file:
 * path -> reply value). Logs `{"msg":"echo ready"}`.
 */
import { readFileSync } from "node:fs";
import { decode, encode } from "@corral/contracts";
import { connectFloor, FLOOR_SUBJECT, type FloorReply, type FloorRequest } from "./protocol.js";

const repliesFile = process.env["BENCH_FLOOR_REPLIES"];
const replies = new Map<string, unknown>(Object.entries(repliesFile ? (JSON.parse(readFileSync(repliesFile, "utf8")) as object) : {}));

const nc = await connectFloor(process.env["BENCH_NATS_URL"] ?? "", "bench-floor-echo");
nc.subscribe(FLOOR_SUBJECT, {
  callback: (_err, msg) => {
    const request = decode<FloorRequest>(msg.data);
    const reply: FloorReply = { value: replies.has(request.path) ? replies.get(request.path) : request };
    msg.respond(encode(reply));
  },
});
await nc.flush();
console.log(JSON.stringify({ msg: "echo ready" }));
process.on("SIGTERM", () => void nc.close().finally(() => process.exit(0)));
