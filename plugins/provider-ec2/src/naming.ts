import { createHash } from "node:crypto";
import type { TaskMessage } from "@corral/provisioner/sdk";

/** Tags on every instance and key pair the provider makes; they are how it finds them again. */
export const TAG = {
  tenant: "corral:tenant",
  cluster: "corral:cluster",
  node: "corral:node",
  /** The Corral installation the resource belongs to: the orphan sweep only looks at its own. */
  installation: "corral:installation",
  name: "Name",
} as const;

export interface Tag {
  Key: string;
  Value: string;
}

const MAX_PART = 40;
const sanitize = (part: string) => part.replace(/[^a-zA-Z0-9_.-]/g, "_").slice(0, MAX_PART);
const digest = (...parts: Array<string | number>) => createHash("sha256").update(parts.join("\0")).digest("hex");

/**
 * `corral-<tenant>-<cluster>-<hash>`: the cluster's key pair. The hash covers the installation and the unsanitised
 * names, so two installations (or two tenants whose names sanitise alike) sharing an account never share a pair.
 */
export function keyPairName(installation: string, tenant: string, clusterId: string): string {
  return `corral-${sanitize(tenant)}-${sanitize(clusterId)}-${digest(installation, tenant, clusterId).slice(0, 10)}`;
}

/**
 * RunInstances' idempotency token (at most 64 ASCII characters): the same for a redelivery of one dispatch, so a
 * CREATE run again after a crash gets the instance the first run launched; different for the next dispatch (a
 * retry, or the CREATE of a CONFIRM rollback), which may launch a fresh one.
 */
export function clientToken(installation: string, task: Pick<TaskMessage, "tenant" | "taskId" | "dispatch" | "taskName">): string {
  return `corral-${digest(installation, task.tenant, task.taskId, task.dispatch, task.taskName).slice(0, 48)}`;
}

/** The instance's `Name`: the node's hostname, else a readable name of the node. */
export function instanceName(task: Pick<TaskMessage, "tenant" | "clusterId" | "config">): string {
  return task.config.hostname || `corral-${sanitize(task.tenant)}-${sanitize(task.clusterId)}-${task.config.nodenum}`;
}

export function instanceTags(installation: string, task: Pick<TaskMessage, "tenant" | "clusterId" | "nodeId" | "config">): Tag[] {
  return [
    { Key: TAG.installation, Value: installation },
    { Key: TAG.tenant, Value: task.tenant },
    { Key: TAG.cluster, Value: task.clusterId },
    { Key: TAG.node, Value: task.nodeId },
    { Key: TAG.name, Value: instanceName(task) },
  ];
}

export function keyPairTags(installation: string, tenant: string, clusterId: string): Tag[] {
  return [
    { Key: TAG.installation, Value: installation },
    { Key: TAG.tenant, Value: tenant },
    { Key: TAG.cluster, Value: clusterId },
  ];
}

/** A DescribeInstances / DescribeKeyPairs filter. */
export interface Filter {
  Name: string;
  Values: string[];
}

export const tagFilter = (key: string, value: string): Filter => ({ Name: `tag:${key}`, Values: [value] });

export const tenantFilters = (installation: string, tenant: string): Filter[] => [tagFilter(TAG.installation, installation), tagFilter(TAG.tenant, tenant)];

export const nodeFilters = (installation: string, tenant: string, nodeId: string): Filter[] => [
  ...tenantFilters(installation, tenant),
  tagFilter(TAG.node, nodeId),
];

export const clusterFilters = (installation: string, tenant: string, clusterId: string): Filter[] => [
  ...tenantFilters(installation, tenant),
  tagFilter(TAG.cluster, clusterId),
];

/** The value of tag `key`, if present. */
export function tagValue(tags: readonly { Key?: string | undefined; Value?: string | undefined }[] | undefined, key: string): string | undefined {
  return tags?.find((t) => t.Key === key)?.Value;
}
