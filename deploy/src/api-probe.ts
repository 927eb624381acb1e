import { request } from "node:http";

/**
 * Whether the gateway on `port` serves requests: `/status` answers anything but 503 (which it answers until it has
 * loaded the tenants; with security on, 401 for want of a token is serving too), with the `X-Request-ID` the
 * gateway puts on every answer, so that another program holding the port is not taken for it.
 */
export function apiServes(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/status", timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode !== 503 && res.headers["x-request-id"] !== undefined);
    });
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve(false));
    req.end();
  });
}
