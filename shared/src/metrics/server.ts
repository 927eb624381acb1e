import { createServer, type Server } from "node:http";
import type { Logger } from "../log.js";
import type { MetricsRegistry } from "./registry.js";

export interface MetricsServerOptions {
  registry: MetricsRegistry;
  /** @default "127.0.0.1" */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  log: Logger;
}

export interface MetricsServer {
  /** The port it listens on. */
  port: number;
  /** `http://<host>:<port>/metrics` */
  url: string;
  stop(): Promise<void>;
}

const json = (status: number, error: string, message: string) => JSON.stringify({ status, error, message });

/**
 * Serves `GET /metrics` (Prometheus text format) on a port of its own, apart from any API port: scraping needs no
 * API credentials and never competes with API routes. Anything else is a JSON 404 or 405.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { registry, log } = options;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const answer = (status: number, body: string, contentType: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": contentType, ...headers }).end(req.method === "HEAD" ? undefined : body);
    };
    if (path !== "/metrics") {
      answer(404, json(404, "not_found", `no such path ${path}; metrics are at /metrics`), "application/json");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      answer(405, json(405, "method_not_allowed", `${req.method} is not allowed on /metrics`), "application/json", { allow: "GET, HEAD" });
      return;
    }
    registry.metrics().then(
      (text) => answer(200, text, registry.contentType),
      (err: unknown) => {
        log.warn("collecting metrics failed", { err });
        answer(500, json(500, "internal", "collecting metrics failed"), "application/json");
      },
    );
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const shownHost = host === "0.0.0.0" || host === "::" ? "localhost" : host;
  let stopping: Promise<void> | undefined;
  return {
    port,
    url: `http://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${port}/metrics`,
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopping;
    },
  };
}
