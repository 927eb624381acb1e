import type { PluginSpec, TaskMessage } from "@corral/contracts";
import { silentLogger } from "@corral/shared";
import { DOCKER_SPEC, HOSTPOOL_SPEC, SIM_SECURED_SPEC, SIM_SPEC, type PluginContext } from "@corral/provisioner";

export interface PluginContextOptions {
  /** The provisioner's work directory. @default "/nonexistent" (for plugins that touch no local files) */
  workDir?: string;
  /** @default a signal never aborted */
  signal?: AbortSignal;
  /**
   * The spec of the task's provider type as the provisioner carries it (`ctx.providerSpec`). @default the bundled
   * provider's spec of that name; none (a remote node) for another type
   */
  providerSpec?: PluginSpec;
}

const BUNDLED_PROVIDERS = new Map([SIM_SPEC, SIM_SECURED_SPEC, DOCKER_SPEC, HOSTPOOL_SPEC].map((spec) => [spec.name, spec]));

/** What a worker hands a plugin for `task`, as provisioner `p`'s worker `w`. */
export function pluginContext(task: TaskMessage, options: PluginContextOptions = {}): PluginContext {
  const providerSpec = options.providerSpec ?? BUNDLED_PROVIDERS.get(String(task.config.provider?.providertype));
  return {
    task,
    tenant: task.tenant,
    workDir: options.workDir ?? "/nonexistent",
    provisionerId: "p",
    workerId: "w",
    signal: options.signal ?? new AbortController().signal,
    log: silentLogger,
    ...(providerSpec ? { providerSpec } : {}),
  };
}
