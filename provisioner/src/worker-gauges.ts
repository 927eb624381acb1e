import { sampledGauge, type MetricsRegistry } from "@corral/shared";
import type { WorkerPool } from "./worker-pool.js";

/**
 * `corral_provisioner_worker_loops{state}`: the provisioner's worker loops running a task (busy) and waiting for
 * one (idle), and `corral_provisioner_capacity`, the most it runs; read from the pool at each scrape.
 */
export function registerWorkerGauges(registry: MetricsRegistry, pool: WorkerPool, capacity: number): void {
  sampledGauge(registry, {
    name: "corral_provisioner_worker_loops",
    help: "Worker loops of this provisioner running a task (state busy) or waiting for one (state idle)",
    labelNames: ["state"],
    sample() {
      const { busy, idle } = pool.loopStates();
      return [
        [{ state: "busy" }, busy],
        [{ state: "idle" }, idle],
      ] as const;
    },
  });
  sampledGauge(registry, {
    name: "corral_provisioner_capacity",
    help: "Most worker loops this provisioner runs at once, over all tenants",
    labelNames: [],
    sample: () => [[{}, capacity]] as const,
  });
}
