/**
 * Whether the system answers REST throughout: every 100 ms (or as soon as the previous round ended) one GET goes to
 * each gateway. A request fails on a network error, a timeout or a 5xx. The system is unavailable while no gateway
 * answers (as behind a load balancer); the longest such stretch is the outage reported.
 */
import type { Caller } from "../api.js";
import { identityHeaders } from "./rest.js";

export interface AvailabilityReport {
  requests: number;
  errors: number;
  /** Errors per gateway base URL. */
  errorsByGateway: Record<string, number>;
  /** ms: the longest stretch in which no gateway answered. */
  longestOutageMs: number;
  /** ms: the longest stretch in which one gateway did not answer. */
  longestGatewayOutageMs: number;
}

export interface AvailabilityProbe {
  stop(): Promise<AvailabilityReport>;
}

export function startAvailabilityProbe(baseUrls: readonly string[], caller: Caller, path: string, intervalMs = 100, timeoutMs = 2_000): AvailabilityProbe {
  let stopped = false;
  let requests = 0;
  let errors = 0;
  const errorsByGateway: Record<string, number> = Object.fromEntries(baseUrls.map((u) => [u, 0]));
  const downSince = new Map<string, number>();
  let systemDownSince: number | undefined;
  let longestOutageMs = 0;
  let longestGatewayOutageMs = 0;

  const ok = async (baseUrl: string) => {
    try {
      const res = await fetch(baseUrl + path, { headers: identityHeaders(caller), signal: AbortSignal.timeout(timeoutMs) });
      await res.arrayBuffer();
      return res.status < 500;
    } catch {
      return false;
    }
  };
  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      const answers = await Promise.all(baseUrls.map(ok));
      const now = Date.now();
      answers.forEach((up, i) => {
        const url = baseUrls[i] ?? "";
        requests++;
        if (up) {
          const since = downSince.get(url);
          if (since !== undefined) longestGatewayOutageMs = Math.max(longestGatewayOutageMs, now - since);
          downSince.delete(url);
        } else {
          errors++;
          errorsByGateway[url] = (errorsByGateway[url] ?? 0) + 1;
          if (!downSince.has(url)) downSince.set(url, started);
        }
      });
      if (answers.some(Boolean)) {
        if (systemDownSince !== undefined) longestOutageMs = Math.max(longestOutageMs, now - systemDownSince);
        systemDownSince = undefined;
      } else systemDownSince ??= started;
      await new Promise((r) => setTimeout(r, Math.max(0, intervalMs - (Date.now() - started))));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      const now = Date.now();
      if (systemDownSince !== undefined) longestOutageMs = Math.max(longestOutageMs, now - systemDownSince);
      for (const since of downSince.values()) longestGatewayOutageMs = Math.max(longestGatewayOutageMs, now - since);
      return { requests, errors, errorsByGateway, longestOutageMs, longestGatewayOutageMs };
    },
  };
}
