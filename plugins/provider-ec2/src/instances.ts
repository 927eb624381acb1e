import type { TaskMessage } from "@corral/provisioner/sdk";
import { LIVE_STATES, type Ec2Api, type Ec2Instance } from "./ec2-api.js";
import { nodeFilters, TAG, type Filter } from "./naming.js";

const liveFilter: Filter = { Name: "instance-state-name", Values: [...LIVE_STATES] };

/** Whether an instance was launched by this installation for the task's node. */
export function isNodeInstance(instance: Ec2Instance, installation: string, task: Pick<TaskMessage, "tenant" | "nodeId">): boolean {
  const { tags } = instance;
  return tags[TAG.installation] === installation && tags[TAG.tenant] === task.tenant && tags[TAG.node] === task.nodeId;
}

/** The node's live instances (normally at most one), oldest first. */
export async function liveNodeInstances(api: Ec2Api, installation: string, task: Pick<TaskMessage, "tenant" | "nodeId">, signal?: AbortSignal): Promise<Ec2Instance[]> {
  const found = await api.describeInstances([...nodeFilters(installation, task.tenant, task.nodeId), liveFilter], signal);
  return found.sort((a, b) => (a.launchTime ?? 0) - (b.launchTime ?? 0) || (a.id < b.id ? -1 : 1));
}

/** The live instances carrying all of `filters`' tags. */
export function liveInstances(api: Ec2Api, filters: Filter[], signal?: AbortSignal): Promise<Ec2Instance[]> {
  return api.describeInstances([...filters, liveFilter], signal);
}

/** The instance CREATE reported (`results.providerid`) when it is the node's, in whatever state. */
export async function reportedInstance(api: Ec2Api, installation: string, task: TaskMessage, signal?: AbortSignal): Promise<Ec2Instance | undefined> {
  const id = task.config.results?.["providerid"];
  if (typeof id !== "string" || !id.startsWith("i-")) return undefined;
  const found = await api.describeInstance(id, signal);
  return found && isNodeInstance(found, installation, task) ? found : undefined;
}

/** `code: message` of an instance's state reason, or its state alone. */
export function stateReasonText(instance: Ec2Instance): string {
  const r = instance.stateReason;
  if (!r) return `no state reason given`;
  return r.message.startsWith(`${r.code}:`) || !r.code ? r.message : `${r.code}: ${r.message}`;
}
