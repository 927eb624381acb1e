import { METRICS_PROCESSES, envNameOf, metricsPortKey, type CorralConfig, type MetricsProcess } from "@corral/shared";
import { freePort, isPortFree } from "./ports.js";

/** Where one process serves its metrics under `npm start`. */
export interface MetricsPort {
  process: MetricsProcess;
  port: number;
  /** The configured port (taken, or `0`), when the launcher chose another. */
  configured?: number;
}

export const isMetricsProcess = (name: string): name is MetricsProcess => (METRICS_PROCESSES as readonly string[]).includes(name);

/**
 * A metrics port for each process `npm start` runs: its `metrics.<process>.port`, or a free one when that is `0`,
 * taken, or already given to another process. Empty when `metrics.enabled` is false.
 */
export async function assignMetricsPorts(config: CorralConfig, processes: readonly string[]): Promise<MetricsPort[]> {
  if (!config.get("metrics.enabled")) return [];
  const given = new Set<number>();
  const out: MetricsPort[] = [];
  for (const process of processes.filter(isMetricsProcess)) {
    const configured = config.get(metricsPortKey(process));
    const usable = configured !== 0 && !given.has(configured) && (await isPortFree(configured));
    let port = configured;
    while (!usable && (port === configured || given.has(port))) port = await freePort();
    given.add(port);
    out.push({ process, port, ...(usable ? {} : { configured }) });
  }
  return out;
}

/** The environment that gives a process its assigned port. */
export const metricsPortEnv = (assigned: MetricsPort): Record<string, string> => ({
  [envNameOf(metricsPortKey(assigned.process))]: String(assigned.port),
});
