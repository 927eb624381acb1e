import { redisCall, type EndpointHandlers, type Logger } from "@corral/shared";
import type { UsageStore } from "../adapters/usage-store.js";
import { resolveUsageQuery } from "../domain/usage-query.js";

/**
 * `GET /metrics/nodes/usage`: node-seconds of the scope the caller may see (services/metrics/README.md); 503 while
 * Redis is unavailable.
 */
export function nodeUsageHandlers(store: UsageStore, now: () => number, log: Logger) {
  return {
    "metrics.nodeUsage": async (request) => {
      const nowSeconds = Math.floor(now() / 1000);
      const query = resolveUsageQuery(request.identity, request.query ?? {}, nowSeconds);
      const figure = await redisCall(
        "node usage cannot be read (node events are recorded when it is back)",
        () => store.usage(query.scope, { start: query.start, end: query.end }, nowSeconds),
        { log },
      );
      return { start: figure.start, end: figure.end, data: [{ time: figure.start, value: figure.value }] };
    },
  } satisfies EndpointHandlers<"metrics">;
}
