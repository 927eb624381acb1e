/**
 * HTTP framing at the gateway, over raw sockets: what a keep-alive client or a proxy relies on.
 */
import { connect } from "node:net";
import { testWithSystem } from "../helpers/system-test.js";

const test = testWithSystem();

/**
 * Sends each request on one keep-alive connection, the next once the previous answer has stopped arriving
 * (quiet for `quietMs`), and returns everything read.
 */
function conversation(port: number, requests: string[], quietMs = 700): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let out = "";
    let next = 0;
    let timer: NodeJS.Timeout | undefined;
    const sendNext = () => {
      if (next === requests.length) return socket.destroy();
      socket.write(requests[next++]!);
      timer = setTimeout(sendNext, quietMs * 3);
    };
    socket.on("connect", sendNext);
    socket.on("data", (chunk) => {
      out += chunk.toString("latin1");
      clearTimeout(timer);
      timer = setTimeout(sendNext, quietMs);
    });
    socket.on("close", () => resolve(out));
    socket.on("error", reject);
  });
}

const portOf = (baseUrl: string) => Number(new URL(baseUrl).port);
const IDENTITY = "Service-UserID: admin\r\nService-TenantID: superadmin\r\n";

test("HEAD is answered like GET, without a body, so the next response on the connection is read correctly", async (t) => {
  const port = portOf(t.context.sys.baseUrl);
  const out = await conversation(port, [`HEAD /v2/tenants HTTP/1.1\r\nHost: x\r\n${IDENTITY}\r\n`, "GET /v2/status HTTP/1.1\r\nHost: x\r\n\r\n"]);
  const [first, ...rest] = out.split("\r\n\r\n");
  t.regex(first ?? "", /^HTTP\/1\.1 200 OK\r\n/);
  t.regex(rest.join("\r\n\r\n"), /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\{"status":"OK"\}$/, "the GET's response follows the HEAD's headers directly");
  const unknown = await conversation(port, ["HEAD /v2/nowhere HTTP/1.1\r\nHost: x\r\n\r\n", "GET /v2/status HTTP/1.1\r\nHost: x\r\n\r\n"]);
  t.regex(unknown, /^HTTP\/1\.1 404 Not Found\r\n[\s\S]*?\r\n\r\nHTTP\/1\.1 200 OK\r\n/, "an error answer to HEAD has no body either");
});
