/** Helpers of the provisioner tests: task messages, publishing, reading results, writing assignments. */
import { randomUUID } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  ASSIGNMENT_KEY,
  buckets,
  encode,
  taskSubject,
  type WorkerAssignment,
  taskMessageId,
  type TaskConfig,
  type TaskMessage,
  type TaskResult,
} from "@corral/contracts";
import { modifyValue, openBucket, storedResults } from "@corral/shared";
import { eventually } from "../../test/helpers/eventually.js";

export { eventually };

export const uniqueName = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

export interface TaskInput extends Partial<Omit<TaskMessage, "config">> {
  tenant: string;
  config?: Partial<TaskConfig>;
}

/** A task message with defaults for everything not given: a sim CREATE of node 1000. */
export function taskMessage(input: TaskInput): TaskMessage {
  const { config, ...rest } = input;
  return {
    clusterId: "00000001",
    planId: "00000001-001",
    taskId: `00000001-001-${randomUUID().slice(0, 8)}`,
    dispatch: 1,
    taskName: "CREATE",
    nodeId: randomUUID(),
    submitTime: Date.now(),
    ...rest,
    config: {
      cluster: {},
      hostname: "test1-1000.local",
      ipaddresses: {},
      nodenum: 1000,
      hardwaretype: "small",
      imagetype: "ubuntu",
      sshuser: "ubuntu",
      services: [],
      automators: [],
      provider: { name: "sim", providertype: "sim", provisioner: {} },
      results: {},
      ...config,
    },
  };
}

/** Publishes a task as the clusters service does (message id `<taskId>.<dispatch>`). */
export async function publishTask(nc: NatsConnection, task: TaskMessage, opts: { timeoutMs?: number } = {}): Promise<void> {
  await jetstream(nc).publish(taskSubject(task.tenant), encode(task), {
    msgID: taskMessageId(task.taskId, task.dispatch),
    ...(opts.timeoutMs ? { timeout: opts.timeoutMs } : {}),
  });
}

/** The stored result of a dispatch (on its own subject or in its plan's batches), or undefined. */
export async function readResult(nc: NatsConnection, task: TaskMessage): Promise<TaskResult | undefined> {
  return (await storedResults(await jetstreamManager(nc), task, { first: true }))[0];
}

/** Waits for the result of a dispatch. */
export function waitResult(nc: NatsConnection, task: TaskMessage, timeoutMs = 10_000): Promise<TaskResult> {
  return eventually(async () => (await readResult(nc, task)) ?? false, {
    what: `the result of ${task.taskName} ${task.taskId}.${task.dispatch}`,
    timeoutMs,
  });
}

/** How many results are stored for a dispatch (the results stream keeps every one, alone or in batches). */
export async function countResults(nc: NatsConnection, task: TaskMessage): Promise<number> {
  return (await storedResults(await jetstreamManager(nc), task)).length;
}

/** Replaces one provisioner's part of the shared assignment (the other provisioners' parts stay). */
export async function assign(nc: NatsConnection, provisionerId: string, workers: Record<string, number>): Promise<void> {
  const kv = await openBucket(nc, buckets.assignments);
  await modifyValue<WorkerAssignment>(kv, ASSIGNMENT_KEY, (current) => {
    const next = { ...(current?.value ?? {}) };
    if (Object.keys(workers).length) next[provisionerId] = workers;
    else delete next[provisionerId];
    return { put: next };
  });
}

/** Sets one tenant's workers on one provisioner, leaving the rest of the assignment alone (0 removes it). */
export async function assignTenant(nc: NatsConnection, provisionerId: string, tenant: string, workers: number): Promise<void> {
  const kv = await openBucket(nc, buckets.assignments);
  await modifyValue<WorkerAssignment>(kv, ASSIGNMENT_KEY, (current) => {
    const next = { ...(current?.value ?? {}) };
    const mine = { ...(next[provisionerId] ?? {}) };
    if (workers > 0) mine[tenant] = workers;
    else delete mine[tenant];
    if (Object.keys(mine).length) next[provisionerId] = mine;
    else delete next[provisionerId];
    return { put: next };
  });
}
