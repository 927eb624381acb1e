import { METRICS_PROCESSES, envNameOf, metricsPortKey, type CorralConfig, type MetricsProcess } from "@corral/shared";
import type { Instance } from "./instances.js";
import { freePort, isPortFree } from "./ports.js";

/** Where one process serves its metrics under `npm start`. */
export interface MetricsPort {
  process: MetricsProcess;
  /** The instance's name: `gateway`, or `gateway#1` when the gateway runs several. */
  name: string;
  port: number;
  /** The port it would have had (taken, or `0`), when the launcher chose another. */
  configured?: number;
}

export const isMetricsProcess = (name: string): name is MetricsProcess => (METRICS_PROCESSES as readonly string[]).includes(name);

/**
 * The ports of one instance's block: instance N of a process gets its `metrics.<process>.port` + N times the number of
 * processes, so the default ports (9464-9471, one per process) are followed by a block per further instance
 * (gateway#1 on 9472, tenancy#1 on 9473, ...), never another process's port.
 */
const portOfInstance = (configured: number, index: number): number => configured + index * METRICS_PROCESSES.length;

/**
 * A metrics port for each instance `npm start` runs: its port as above, or a free one when that is `0` (configured
 * so), past 65535, taken, already given to another instance, or the API's or the token server's. Empty when
 * `metrics.enabled` is false.
 */
export async function assignMetricsPorts(config: CorralConfig, instances: readonly Instance[]): Promise<MetricsPort[]> {
  if (!config.get("metrics.enabled")) return [];
  // The API's and the token server's ports are not listened on yet when the free ports are picked.
  const given = new Set<number>([config.get("server.port"), config.get("security.auth.server.bind.port")]);
  const out: MetricsPort[] = [];
  for (const { service, index, name } of instances) {
    const process = service.name;
    if (!isMetricsProcess(process)) continue;
    const configured = config.get(metricsPortKey(process));
    const wanted = configured === 0 ? 0 : portOfInstance(configured, index);
    const usable = wanted !== 0 && wanted <= 65_535 && !given.has(wanted) && (await isPortFree(wanted));
    let port = wanted;
    while (!usable && (port === wanted || given.has(port))) port = await freePort();
    given.add(port);
    out.push({ process, name, port, ...(usable ? {} : { configured: wanted }) });
  }
  return out;
}

/** The environment that gives a process its assigned port. */
export const metricsPortEnv = (assigned: MetricsPort): Record<string, string> => ({
  [envNameOf(metricsPortKey(assigned.process))]: String(assigned.port),
});
