import type { TaskConfig, TaskMessage } from "./task-protocol.js";

/**
 * Node health (docs/providers.md, Node health): whether a node's machine still exists and answers, as its provider
 * tells. The provisioner holding a tenant's workers checks the tenant's nodes and publishes what it finds as
 * `NodeHealthReport`s on `healthReportSubject(tenant)`; the clusters service keeps each node's `NodeHealth` and
 * announces every change as a `node.health` cluster event.
 *
 * - `healthy`: the machine exists and answers (docker, lxd, ec2: it runs; hostpool: its SSH answers with the pinned key);
 * - `unreachable`: it exists but does not answer (stopped, frozen, SSH refused or silent, another host key);
 * - `missing`: the provider does not know it any more (removed, terminated);
 * - `unknown`: it could not be told (the provider's API did not answer, no credentials, never checked).
 */
export const NODE_HEALTH_STATES = ["healthy", "unreachable", "missing", "unknown"] as const;
export type NodeHealthState = (typeof NODE_HEALTH_STATES)[number];

/** What one check of one node found. */
export interface NodeHealthCheck {
  state: NodeHealthState;
  /** Why, in a sentence a user can act on (`container corral-t-c-1-ab12cd34 is exited (exit code 137)`); never a secret. */
  message: string;
}

/** A node's health as the cluster shows it. */
export interface NodeHealth extends NodeHealthCheck {
  /** ms: since when the node is in this state (the first check that found it so). */
  since: number;
  /** ms: the last check that reported it (refreshed by changes and by full reports, so it lags at most one full report). */
  checkedAt: number;
}

/**
 * A node as its provider's health check sees it: the parts of its tasks that say where its machine is, with the
 * results its provider returned (`providerid`, `ssh-auth`, `ssh_host_keys`) and its addresses. Task-shaped, so a
 * plugin reads it with the helpers it uses on tasks. Provisioners keep one per checked node in bucket
 * `corral_health_targets` (key `<tenant>.<clusterId>.<nodeId>` tokens), written after a successful CREATE or
 * CONFIRM of a provider that checks the node and removed after its DELETE. Without the user's secret provider fields
 * (those live only while a plan runs); with the admin's, as tasks carry them.
 */
export interface HealthTarget extends Pick<TaskMessage, "tenant" | "clusterId" | "nodeId"> {
  config: Pick<TaskConfig, "hostname" | "ipaddresses" | "nodenum" | "hardwaretype" | "imagetype" | "provider" | "results"> &
    Partial<Pick<TaskConfig, "flavor" | "image" | "sshuser">>;
  /** ms: when the task that wrote it ended (a checker writes it again when it grows old, see `HEALTH_TARGET_MAX_AGE_MS`). */
  recordedAt: number;
}

/**
 * Targets expire this long after they were written, so those of tenants that are gone (nobody checks them any
 * more) leave the bucket by themselves; a checker writes a target again once it is half this old.
 */
export const HEALTH_TARGET_MAX_AGE_MS = 14 * 24 * 3_600_000;

/** One node's line in a report. */
export interface NodeHealthEntry extends NodeHealthCheck {
  clusterId: string;
  nodeId: string;
  /** ms: when its check ended. */
  checkedAt: number;
}

/**
 * What a provisioner publishes on `healthReportSubject(tenant)` (core NATS, at most once): the nodes whose state or
 * message changed since its last report, or (`full`) every node it checks, which it sends every few minutes so
 * that a lost report, a restarted clusters service or a new checker is made good. Split into messages of at most
 * `MAX_HEALTH_REPORT_NODES` nodes.
 */
export interface NodeHealthReport {
  tenant: string;
  provisionerId: string;
  full: boolean;
  nodes: NodeHealthEntry[];
}

export const MAX_HEALTH_REPORT_NODES = 500;

/**
 * An on-demand check (`healthCheckSubject(tenant)`, answered by the provisioner checking the tenant): the tenant's
 * nodes of one cluster (or of every cluster), or only the nodes named, checked now; changes are also reported as
 * usual.
 */
export interface HealthCheckRequest {
  clusterId?: string;
  nodeIds?: string[];
}

/** The answer to a `HealthCheckRequest`: what each node's check found. */
export interface HealthCheckReply {
  provisionerId: string;
  nodes: NodeHealthEntry[];
}
