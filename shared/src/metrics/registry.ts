import { Gauge, Registry, collectDefaultMetrics } from "prom-client";

/** The metrics of one process (prom-client's Registry): what its `/metrics` answers. */
export type MetricsRegistry = Registry;

/** A registry with prom-client's default process metrics (CPU, memory, event loop lag, GC, handles). */
export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

export interface SampledGaugeOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  /** Read at each scrape: every series' labels and value. Series not answered are dropped. */
  sample(): Promise<Iterable<readonly [Readonly<Record<L, string>>, number]>> | Iterable<readonly [Readonly<Record<L, string>>, number]>;
}

/** A gauge computed when scraped (state the process holds or can read: counts by status, queue depths, loops). */
export function sampledGauge<L extends string>(registry: MetricsRegistry, options: SampledGaugeOptions<L>): void {
  new Gauge<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames,
    registers: [registry],
    async collect() {
      const samples = await options.sample();
      this.reset();
      for (const [labels, value] of samples) this.set(labels, value);
    },
  });
}
