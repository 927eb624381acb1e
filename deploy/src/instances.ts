import { join } from "node:path";
import { INSTANCE_ENV, type MetricsProcess } from "@corral/shared";
import type { ServiceEntry } from "./service-discovery.js";

/** One process the launcher runs: an instance of a service (or of the provisioner). */
export interface Instance {
  service: ServiceEntry;
  /** 0, 1, ... among the service's instances. */
  index: number;
  /** What notices and the metrics line call it: `clusters`, or `clusters#1` when the service runs several. */
  name: string;
}

/** `count(service)` instances of each service, in the services' order. */
export function instancesOf(services: readonly ServiceEntry[], count: (service: string) => number): Instance[] {
  return services.flatMap((service) => {
    const n = count(service.name);
    return Array.from({ length: n }, (_, index) => ({ service, index, name: n > 1 ? `${service.name}#${index}` : service.name }));
  });
}

/** How many instances of `service` the settings ask for; 1 for a service they do not name. */
export const countOf = (counts: Readonly<Record<MetricsProcess, number>>) => (service: string): number =>
  (counts as Readonly<Record<string, number>>)[service] ?? 1;

/**
 * What one instance's environment adds to its service's: its number (logged in every line), and for provisioners
 * after the first a work directory of their own (two would sync plugin resources into, and sweep, each other's
 * files) and, when an id is configured, an id of their own (the registry and the worker assignment are by id).
 */
export function instanceEnv(instance: Instance, serviceEnv: NodeJS.ProcessEnv, dataDir: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { [INSTANCE_ENV]: String(instance.index) };
  if (instance.service.name !== "provisioner" || instance.index === 0) return out;
  const workDir = serviceEnv["CORRAL_PROVISIONER_WORKDIR"]?.trim() || join(dataDir, "provisioner");
  out["CORRAL_PROVISIONER_WORKDIR"] = `${workDir}-${instance.index}`;
  const id = serviceEnv["CORRAL_PROVISIONER_ID"]?.trim();
  if (id) out["CORRAL_PROVISIONER_ID"] = `${id}-${instance.index}`;
  return out;
}
