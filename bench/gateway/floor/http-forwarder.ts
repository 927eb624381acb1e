/**
 * The floor of the REST path: a bare uWebSockets.js server that forwards each request over NATS request/reply
 * (msgpack) to the echo responder and answers its reply as JSON. No routing, identity, validation or error
 * mapping: what any gateway of this shape costs at least. A process of its own, started by throughput.ts.
 * Env: BENCH_NATS_URL, BENCH_FLOOR_PORT (0: any free port). Logs `{"msg":"floor listening","port":N}`.
 */
import uWS from "uWebSockets.js";
import { decode, encode } from "@corral/contracts";
import { connectFloor, FLOOR_SUBJECT, type FloorReply, type FloorRequest } from "./protocol.js";

const nc = await connectFloor(process.env["BENCH_NATS_URL"] ?? "", "bench-floor-http");

const app = uWS.App().any("/*", (res, req) => {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  const request: FloorRequest = {
    path: req.getUrl(),
    userId: req.getHeader("service-userid"),
    tenant: req.getHeader("service-tenantid"),
  };
  nc.request(FLOOR_SUBJECT, encode(request), { timeout: 15_000 }).then(
    (msg) => {
      if (aborted) return;
      const body = JSON.stringify(decode<FloorReply>(msg.data).value);
      res.cork(() => res.writeStatus("200 OK").writeHeader("content-type", "application/json").end(body));
    },
    () => {
      if (!aborted) res.cork(() => res.writeStatus("504 Gateway Timeout").end());
    },
  );
});

app.listen("127.0.0.1", Number(process.env["BENCH_FLOOR_PORT"] ?? 0), (socket) => {
  if (!socket) {
    console.error("floor: cannot listen");
    process.exit(1);
  }
  console.log(JSON.stringify({ msg: "floor listening", port: uWS.us_socket_local_port(socket) }));
});
process.on("SIGTERM", () => process.exit(0));
