/**
 * The launcher's "ready" check: the gateway serves once `/status` answers anything but 503 with the gateway's
 * `X-Request-ID`; another program holding the port (answering without it) is not the gateway.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import test from "ava";
import { apiServes } from "../src/api-probe.js";

async function serving(status: number, headers: Record<string, string>): Promise<{ port: number; server: Server }> {
  const server = createServer((_req, res) => res.writeHead(status, headers).end());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, server };
}

for (const [status, headers, serves, what] of [
  [200, { "x-request-id": "r1" }, true, "200 from the gateway"],
  [401, { "x-request-id": "r2" }, true, "401 from the gateway (security on, no token)"],
  [503, { "x-request-id": "r3" }, false, "503: the gateway has not loaded the tenants yet"],
  [404, {}, false, "another program on the port (404, no request id)"],
  [200, {}, false, "another program on the port (200, no request id)"],
] as const) {
  test(`api probe - ${what}`, async (t) => {
    const { port, server } = await serving(status, headers);
    try {
      t.is(await apiServes(port), serves);
    } finally {
      server.close();
    }
  });
}

test("api probe - nothing listening is not serving", async (t) => {
  const { port, server } = await serving(200, {});
  await new Promise((resolve) => server.close(resolve));
  t.false(await apiServes(port));
});
