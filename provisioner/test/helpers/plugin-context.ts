import { silentLogger, type TaskMessage } from "@corral/shared";
import type { PluginContext } from "@corral/provisioner";

export interface PluginContextOptions {
  /** The provisioner's work directory. @default "/nonexistent" (for plugins that touch no local files) */
  workDir?: string;
  /** @default a signal never aborted */
  signal?: AbortSignal;
}

/** What a worker hands a plugin for `task`, as provisioner `p`'s worker `w`. */
export function pluginContext(task: TaskMessage, options: PluginContextOptions = {}): PluginContext {
  return {
    task,
    tenant: task.tenant,
    workDir: options.workDir ?? "/nonexistent",
    provisionerId: "p",
    workerId: "w",
    signal: options.signal ?? new AbortController().signal,
    log: silentLogger,
  };
}
