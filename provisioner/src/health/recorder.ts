import { TaskName, type TaskMessage, type TaskResult } from "@corral/contracts";
import type { Logger } from "@corral/shared";
import type { PluginSet } from "../plugin-set.js";
import { healthTargetOf, type HealthTargetStore } from "./targets.js";

/** Keeps the health targets of the nodes whose provider tasks ran here. */
export interface HealthTargetRecorder {
  /**
   * After a task ran, before its result is published: a successful CREATE or CONFIRM of a node its provider checks
   * writes the node's target, a successful DELETE removes it. Never throws: a target that cannot be written only
   * leaves the node unchecked (or checked after its machine went), which the log says.
   */
  afterTask(task: TaskMessage, result: TaskResult): Promise<void>;
}

export function createHealthTargetRecorder(plugins: PluginSet, store: HealthTargetStore, log: Logger): HealthTargetRecorder {
  return {
    async afterTask(task, result) {
      if (result.status !== 0) return;
      const name = result.taskName;
      if (name !== TaskName.Create && name !== TaskName.Confirm && name !== TaskName.Delete) return;
      const provider = plugins.providers.get(String(task.config?.provider?.providertype));
      if (!provider?.health) return;
      const target = healthTargetOf(task, result, provider.spec);
      // A node never checked has no target: nothing to write, nor to remove (a delete would still be a write).
      if (provider.health.batchOf(target) === undefined) return;
      try {
        if (name === TaskName.Delete) await store.remove(target);
        else await store.put(target);
      } catch (err) {
        log.warn("health: the node's health target could not be written", { nodeId: task.nodeId, taskName: name, err });
      }
    },
  };
}
