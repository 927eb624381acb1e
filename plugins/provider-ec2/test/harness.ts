/** What the ec2 provider's tests share: a plugin host on a test NATS, task messages, and running the operations. */
import { randomUUID } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import type { TaskName, TaskMessage } from "@corral/contracts";
import { createLogger, installationId, openClusterRecordReader, retryingOnce, type Logger } from "@corral/shared";
import { ClusterKeys, defaultSandbox, SshPool, type PluginHost, type PluginOutcome, type ProviderPlugin } from "@corral/provisioner/sdk";
import { createEc2Provider, type Ec2ProviderOptions } from "../src/index.js";
import { EMULATOR_AMI } from "../../../test/helpers/ec2-emulator/index.js";

export const uniqueName = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** Every log line of the host, as written (JSON). */
export interface Harness {
  host: PluginHost;
  provider: ProviderPlugin;
  pool: SshPool;
  clusterKeys: ClusterKeys;
  logs: string[];
  /** Runs the provider operation of `task` as a worker would, its log going to `logs`. */
  run(task: TaskMessage, signal?: AbortSignal): Promise<PluginOutcome>;
}

/** A plugin host as a provisioner makes it, its log lines kept, and the ec2 provider on it. */
export function harness(nc: NatsConnection, options: Ec2ProviderOptions = {}): Harness {
  const logs: string[] = [];
  const log: Logger = createLogger({ service: "provider-ec2-test" }, { level: "debug", write: (line) => logs.push(line) });
  const pool = new SshPool({ log });
  const clusterKeys = new ClusterKeys(nc);
  const host: PluginHost = {
    nc,
    log,
    provisionerId: "ec2-test",
    workDir: "/nonexistent",
    ssh: { pool, credentials: { workDir: "/nonexistent", clusterKeys } },
    clusterKeys,
    sandbox: defaultSandbox(),
    clusters: retryingOnce(() => openClusterRecordReader(nc)),
    installationId: retryingOnce(() => installationId(nc)),
    env: {},
  };
  // Tests sweep on their own, limited to their tenants.
  const provider = createEc2Provider(host, { sweepIntervalMs: 0, pollMs: 100, maxPollMs: 500, confirmTimeoutMs: 60_000, ...options });
  const run = (task: TaskMessage, signal: AbortSignal = new AbortController().signal) => {
    const op = task.taskName === "CREATE" ? provider.create : task.taskName === "CONFIRM" ? provider.confirm : provider.delete;
    return op({ task, tenant: task.tenant, workDir: "/nonexistent", provisionerId: "ec2-test", workerId: "w", signal, log: log.child({ taskId: task.taskId }) });
  };
  return { host, provider, pool, clusterKeys, logs, run };
}

export interface NodeInput {
  tenant: string;
  clusterId: string;
  nodenum?: number;
  /** Provider fields: region and endpoint unless given. */
  fields?: Record<string, string>;
  image?: string;
  flavor?: string;
  sshuser?: string;
  taskId?: string;
  dispatch?: number;
}

/** A task of a node of provider type ec2 against `endpoint`; `previous` outcomes make its results and addresses. */
export function nodeTask(endpoint: string, input: NodeInput, taskName: TaskName, previous: PluginOutcome[] = []): TaskMessage {
  const nodenum = input.nodenum ?? 1000;
  return {
    tenant: input.tenant,
    clusterId: input.clusterId,
    planId: `${input.clusterId}-001`,
    taskId: input.taskId ?? `${input.clusterId}-001-${taskName}-${nodenum}`,
    dispatch: input.dispatch ?? 1,
    taskName,
    nodeId: `${input.clusterId}-${nodenum}`,
    submitTime: Date.now(),
    config: {
      cluster: {},
      hostname: `node-${nodenum}.${input.clusterId}.corral.test`,
      ipaddresses: Object.assign({}, ...previous.map((o) => o.ipaddresses ?? {})),
      nodenum,
      hardwaretype: "small",
      imagetype: "debian12",
      flavor: input.flavor ?? "t3.micro",
      image: input.image ?? EMULATOR_AMI,
      ...(input.sshuser !== undefined ? { sshuser: input.sshuser } : {}),
      services: [],
      automators: [],
      provider: { name: "ec2-test", providertype: "ec2", provisioner: { region: "us-east-1", endpoint, ...input.fields } },
      results: Object.assign({}, ...previous.map((o) => o.result ?? {})),
    },
  };
}
