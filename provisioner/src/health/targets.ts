import type { NatsConnection } from "@nats-io/transport-node";
import type { KvEntry } from "@nats-io/kv";
import { buckets, decode, kvKey, type HealthTarget, type JsonObject, type PluginSpec, type TaskMessage, type TaskResult } from "@corral/contracts";
import { deleteValue, followWatch, openBucket, putValue, retryingOnce, type KV, type Logger } from "@corral/shared";

/** The key of a node's target: `<tenant>.<clusterId>.<nodeId>` tokens. */
export const healthTargetKey = (t: Pick<HealthTarget, "tenant" | "clusterId" | "nodeId">) => kvKey(t.tenant, t.clusterId, t.nodeId);

/**
 * The target of a node after a successful CREATE or CONFIRM: the task's node and provider, its results with the
 * task's own merged in, and the addresses the task reported. The user's secret provider fields are left out (they
 * live only while a plan runs); the admin's stay, as every task of the node carries them.
 */
export function healthTargetOf(task: TaskMessage, result: TaskResult, spec: PluginSpec | undefined): HealthTarget {
  const { config } = task;
  return {
    tenant: result.tenant,
    clusterId: task.clusterId,
    nodeId: task.nodeId,
    config: {
      hostname: result.hostname ?? config.hostname,
      ipaddresses: result.ipaddresses ?? config.ipaddresses ?? {},
      nodenum: config.nodenum,
      hardwaretype: config.hardwaretype,
      imagetype: config.imagetype,
      ...(config.flavor !== undefined ? { flavor: config.flavor } : {}),
      ...(config.image !== undefined ? { image: config.image } : {}),
      ...(config.sshuser !== undefined ? { sshuser: config.sshuser } : {}),
      provider: { ...config.provider, provisioner: withoutUserSecrets(config.provider?.provisioner ?? {}, spec) },
      results: { ...(config.results ?? {}), ...(result.result ?? {}) },
    },
    recordedAt: result.endTime,
  };
}

/** The provider fields without those the spec declares as secret user fields. */
function withoutUserSecrets(fields: JsonObject, spec: PluginSpec | undefined): JsonObject {
  const user = spec?.parameters?.user?.fields ?? {};
  const secret = (name: string) => {
    const field = Object.hasOwn(user, name) ? user[name] : undefined;
    return field !== undefined && (field.sensitive === true || field.type === "password");
  };
  return Object.fromEntries(Object.entries(fields).filter(([name]) => !secret(name)));
}

/** Bucket `corral_health_targets`: writes, and the live targets of one tenant. */
export interface HealthTargetStore {
  put(target: HealthTarget): Promise<void>;
  remove(target: Pick<HealthTarget, "tenant" | "clusterId" | "nodeId">): Promise<void>;
  /** Follows one tenant's targets (a watch of `<tenant>.>`) until `stop`. */
  follow(tenant: string): TenantTargets;
}

/** One tenant's targets as last seen, by key. */
export interface TenantTargets {
  current(): ReadonlyMap<string, HealthTarget>;
  stop(): Promise<void>;
}

export function createHealthTargetStore(nc: NatsConnection, log: Logger): HealthTargetStore {
  const bucket = retryingOnce(() => openBucket(nc, buckets.healthTargets));
  return {
    async put(target) {
      await putValue(await bucket(), healthTargetKey(target), target);
    },
    async remove(target) {
      await deleteValue(await bucket(), healthTargetKey(target));
    },
    follow: (tenant) => followTenant(bucket, tenant, log),
  };
}

function followTenant(bucket: () => Promise<KV>, tenant: string, log: Logger): TenantTargets {
  const targets = new Map<string, HealthTarget>();
  const stopping = new AbortController();
  const apply = (entry: KvEntry) => {
    if (entry.operation !== "PUT") {
      targets.delete(entry.key);
      return;
    }
    try {
      const target = decode<HealthTarget>(entry.value);
      if (target?.tenant === tenant && typeof target.config === "object") targets.set(entry.key, target);
    } catch (err) {
      log.warn("health: an unreadable target is skipped", { key: entry.key, err });
    }
  };
  const following = followWatch<KvEntry>({
    open: async () => {
      const watch = await (await bucket()).watch({ key: `${kvKey(tenant)}.>` });
      return { items: watch, stop: () => watch.stop() };
    },
    onItem: apply,
    onError: (err) => log.warn("health: watching a tenant's targets failed; watching again", { tenant, err }),
    // Watched again from the start: what was deleted meanwhile must not stay.
    onEnd: () => targets.clear(),
    signal: stopping.signal,
  });
  return {
    current: () => targets,
    async stop() {
      stopping.abort();
      await following;
    },
  };
}
