import { sampledGauge, type MetricsRegistry } from "@corral/shared";
import type { QueueStateReader } from "../adapters/queue-state.js";

/**
 * `corral_task_queue_depth{tenant, state}`: every tenant's tasks queued and in progress, read from JetStream at
 * each scrape (what `GET /metrics/queues` answers the superadmin). The one series labelled by tenant: tenants are
 * created by the operator (the superadmin), so their number is bounded by the operator, not by API users.
 */
export function registerQueueDepthGauge(registry: MetricsRegistry, reader: QueueStateReader): void {
  sampledGauge(registry, {
    name: "corral_task_queue_depth",
    help: "Tasks of each tenant waiting for a worker (state queued) and running (state in_progress)",
    labelNames: ["tenant", "state"],
    async sample() {
      const counts = await reader.read(await reader.tenants());
      return Object.entries(counts).flatMap(([tenant, c]) => [
        [{ tenant, state: "queued" }, c.queued] as const,
        [{ tenant, state: "in_progress" }, c.inProgress] as const,
      ]);
    },
  });
}
