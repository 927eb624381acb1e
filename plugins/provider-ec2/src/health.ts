import { healthBySettings, type HealthTarget, type NodeHealthCheck, type ProviderHealth } from "@corral/provisioner/sdk";
import type { Ec2Deps } from "./deps.js";
import { clientKey, type Ec2Instance } from "./ec2-api.js";
import { isNodeInstance } from "./instances.js";
import { readSettings, type Ec2Settings } from "./settings.js";

/** Instance ids one DescribeInstances filter is given at most. */
const IDS_PER_CALL = 200;
/**
 * EC2 lists a new instance only after a while (eventual consistency): an instance not listed within this long of
 * its target's writing (after CREATE) is `unknown`, not yet `missing`.
 */
export const LISTING_LAG_MS = 60_000;

/**
 * Health of ec2 nodes: one batch per region, endpoint and account, checked with DescribeInstances by instance id
 * (`providerid`), up to 200 ids a call. Running: `healthy`; pending, stopping or stopped: `unreachable`; terminated,
 * shutting down, unknown to EC2 (a minute after CREATE) or not this node's: `missing`. An API that does not answer (or refuses the
 * credentials) fails the batch: its nodes are `unknown`.
 */
export function ec2Health(deps: () => Promise<Ec2Deps>, now: () => number = Date.now): ProviderHealth {
  return healthBySettings<Ec2Settings>({
    provider: "ec2",
    settingsOf: readSettings,
    clientKey,
    async checkBatch(settings, nodes, ctx) {
      const d = await deps();
      const api = d.api(settings);
      const ids = [...new Set(nodes.map(instanceIdOf).filter((id): id is string => id !== undefined))];
      const found = new Map<string, Ec2Instance>();
      for (let at = 0; at < ids.length; at += IDS_PER_CALL) {
        const page = await api.describeInstances([{ Name: "instance-id", Values: ids.slice(at, at + IDS_PER_CALL) }], ctx.signal);
        for (const instance of page) found.set(instance.id, instance);
      }
      return nodes.map((node) => {
        const id = instanceIdOf(node);
        if (id === undefined) return { state: "unknown", message: `ec2: node ${node.config.hostname} has no instance id from CREATE` };
        const instance = found.get(id);
        if (!instance && now() - node.recordedAt < LISTING_LAG_MS) {
          return { state: "unknown", message: `ec2: instance ${id} is not listed by ${api.where} yet` };
        }
        return instanceHealth(instance && isNodeInstance(instance, d.installation, node) ? instance : undefined, id, api.where);
      });
    },
  });
}

function instanceIdOf(node: HealthTarget): string | undefined {
  const id = node.config.results?.["providerid"];
  return typeof id === "string" && id.startsWith("i-") ? id : undefined;
}

/** An instance's state as a finding. */
export function instanceHealth(instance: Ec2Instance | undefined, id: string, where: string): NodeHealthCheck {
  if (!instance) return { state: "missing", message: `ec2: instance ${id} does not exist in ${where}` };
  switch (instance.state) {
    case "running":
      return { state: "healthy", message: `ec2: instance ${id} is running` };
    case "terminated":
    case "shutting-down":
      return { state: "missing", message: `ec2: instance ${id} is ${instance.state}` };
    default:
      return { state: "unreachable", message: `ec2: instance ${id} is ${instance.state}` };
  }
}
