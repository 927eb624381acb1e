import { healthBySettings, type HealthTarget, type NodeHealthCheck, type ProviderHealth } from "@corral/provisioner/sdk";
import type { LxdDeps } from "./instances.js";
import type { Instance } from "./lxd-api.js";
import { isNodeInstance } from "./naming.js";
import { clientKey, lxdSettings } from "./settings.js";

/**
 * Health of lxd nodes: one batch per LXD endpoint and project, checked with one listing of its instances. A node's
 * instance is the one CREATE reported (`providerid`, its name), else one made for the node. Running: `healthy`;
 * stopped, frozen or in error: `unreachable`; none: `missing`. An LXD that does not answer fails the batch (its
 * nodes are `unknown`).
 */
export function lxdHealth(deps: () => Promise<LxdDeps>, defaultSocket: string): ProviderHealth {
  return healthBySettings({
    provider: "lxd",
    settingsOf: (node) => lxdSettings(node.config.provider?.provisioner ?? {}, defaultSocket),
    clientKey,
    async checkBatch(settings, nodes, ctx) {
      const d = await deps();
      const lxd = d.client(settings);
      const instances = await lxd.listInstances(ctx.signal);
      const byName = new Map(instances.map((i) => [i.name, i]));
      return nodes.map((node) => {
        const reported = node.config.results?.["providerid"];
        const named = typeof reported === "string" ? byName.get(reported) : undefined;
        const found = named && isNodeInstance(named, d.installation, node) ? named : instances.find((i) => isNodeInstance(i, d.installation, node));
        return instanceHealth(found, node, lxd.where);
      });
    },
  });
}

/** An instance's status as a finding. */
export function instanceHealth(instance: Instance | undefined, node: HealthTarget, where: string): NodeHealthCheck {
  if (!instance) return { state: "missing", message: `lxd: node ${node.config.hostname} has no instance on ${where}` };
  if (instance.status === "Running") return { state: "healthy", message: `lxd: instance ${instance.name} is running` };
  return { state: "unreachable", message: `lxd: instance ${instance.name} is ${instance.status.toLowerCase()}` };
}
