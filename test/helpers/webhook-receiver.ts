/**
 * A webhook receiver for tests: an HTTP server on 127.0.0.1 that takes deliveries on any path, checks each one's
 * signature with the Standard Webhooks library (`standardwebhooks`) against the secret registered for its path, and
 * keeps every request, failed attempts included. A path can be told to answer with an error for a while.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import type { WebhookPayload } from "@corral/contracts";

export interface ReceivedRequest {
  path: string;
  /** The `webhook-id` header. */
  id: string;
  /** The status the receiver answered. */
  answered: number;
  /** Whether the signature checked out with the path's secret (false: no secret known, or a bad signature). */
  verified: boolean;
  /** Why the check failed. */
  problem?: string;
  payload: WebhookPayload;
  receivedAt: number;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port><path>`. */
  url(path: string): string;
  /** The secret deliveries to `path` are checked with. */
  setSecret(path: string, secret: string): void;
  /** `path` answers `status` to the next `times` requests. */
  failNext(path: string, times: number, status?: number): void;
  /** `path` answers `status` to every request until told otherwise (`undefined`: 204 again). */
  failAlways(path: string, status: number | undefined): void;
  /** `path` answers each request after `ms`. */
  slow(path: string, ms: number): void;
  /** Every request to `path`, in the order they came. */
  requests(path: string): ReceivedRequest[];
  /** The requests to `path` answered 2xx, each `webhook-id` once (its first success), in order. */
  delivered(path: string): ReceivedRequest[];
  stop(): Promise<void>;
}

const header = (req: IncomingMessage, name: string) => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] ?? "" : value ?? "";
};

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const secrets = new Map<string, string>();
  const failures = new Map<string, { times: number; status: number }>();
  const always = new Map<string, number>();
  const delays = new Map<string, number>();
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0]!;
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = {
        "webhook-id": header(req, "webhook-id"),
        "webhook-timestamp": header(req, "webhook-timestamp"),
        "webhook-signature": header(req, "webhook-signature"),
      };
      let verified = false;
      let problem: string | undefined;
      const secret = secrets.get(path);
      if (secret === undefined) problem = "no secret registered for the path";
      else {
        try {
          new Webhook(secret).verify(body, headers);
          verified = true;
        } catch (err) {
          problem = (err as Error).message;
        }
      }
      let answered = 204;
      const failure = failures.get(path);
      if (always.has(path)) answered = always.get(path)!;
      else if (failure && failure.times > 0) {
        failure.times--;
        answered = failure.status;
      }
      let payload: WebhookPayload;
      try {
        payload = JSON.parse(body) as WebhookPayload;
      } catch {
        payload = { type: "", timestamp: "", tenant: "", data: body };
      }
      const answer = () => {
        received.push({ path, id: headers["webhook-id"], answered, verified, ...(problem ? { problem } : {}), payload, receivedAt: Date.now() });
        res.writeHead(answered).end();
      };
      const delay = delays.get(path);
      if (delay === undefined) answer();
      else setTimeout(answer, delay);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    setSecret: (path, secret) => void secrets.set(path, secret),
    failNext: (path, times, status = 500) => void failures.set(path, { times, status }),
    failAlways: (path, status) => void (status === undefined ? always.delete(path) : always.set(path, status)),
    slow: (path, ms) => void delays.set(path, ms),
    requests: (path) => received.filter((r) => r.path === path),
    delivered(path) {
      const seen = new Set<string>();
      return received.filter((r) => {
        if (r.path !== path || r.answered >= 300 || seen.has(r.id)) return false;
        seen.add(r.id);
        return true;
      });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
