import type { EndpointHandlers } from "@corral/shared";
import type { UsageStore } from "../adapters/usage-store.js";
import { resolveUsageQuery } from "../domain/usage-query.js";

/** `GET /metrics/nodes/usage` (spec 4.9 rules 2-5): node-seconds of the scope the caller may see. */
export function nodeUsageHandlers(store: UsageStore, now: () => number) {
  return {
    "metrics.nodeUsage": async (request) => {
      const nowSeconds = Math.floor(now() / 1000);
      const query = resolveUsageQuery(request.identity, request.query ?? {}, nowSeconds);
      const figure = await store.usage(query.scope, { start: query.start, end: query.end }, nowSeconds);
      return { start: figure.start, end: figure.end, data: [{ time: figure.start, value: figure.value }] };
    },
  } satisfies EndpointHandlers<"metrics">;
}
