import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import {
  decode,
  encode,
  healthCheckSubject,
  HEALTH_TARGET_MAX_AGE_MS,
  type HealthCheckReply,
  type HealthCheckRequest,
  type HealthTarget,
  type NodeHealthCheck,
  type NodeHealthEntry,
  NODE_HEALTH_STATES,
} from "@corral/contracts";
import { mapLimit, type ClusterRecordReader, type Logger } from "@corral/shared";
import { orphanReason } from "../cluster-records.js";
import type { PluginSet } from "../plugin-set.js";
import type { ProviderHealth } from "../plugins/types.js";
import { publishHealthReport, ReportedHealth } from "./reports.js";
import type { HealthTargetStore, TenantTargets } from "./targets.js";

export interface HealthCheckerOptions {
  nc: NatsConnection;
  log: Logger;
  provisionerId: string;
  workDir: string;
  plugins: PluginSet;
  store: HealthTargetStore;
  /** The tenants this provisioner checks now; asked every round. */
  tenants: () => ReadonlySet<string>;
  /** Targets of clusters that are gone or terminated are dropped (`orphanReason`). */
  clusters: () => Promise<ClusterRecordReader>;
  /** Between two rounds, ms; each round checks every batch whose last check is done. */
  intervalMs: number;
  /** How often every checked node is reported, changed or not, ms. @default max(60000, 10 × intervalMs) */
  fullReportMs?: number;
  /** Longest one batch's check may take; past it its nodes are `unknown`, ms. @default max(5000, min(intervalMs, 60000)) */
  checkTimeoutMs?: number;
  now?: () => number;
}

export interface HealthChecker {
  /** A round now: resolves once every batch it started has been checked and its changes published. */
  runRound(): Promise<void>;
  /** Checks the tenant's nodes the request names now (after a check of their batch in flight) and answers the findings. */
  checkNow(tenant: string, request: HealthCheckRequest): Promise<NodeHealthEntry[]>;
  stop(): Promise<void>;
}

/** One node of a round: its target, under its key, and the batch it is checked in. */
interface Due {
  key: string;
  target: HealthTarget;
}

/** What a check found of one node of a tenant. */
interface Finding {
  key: string;
  tenant: string;
  entry: NodeHealthEntry;
}

interface Batch {
  health: ProviderHealth;
  nodes: Due[];
}

/**
 * Checks the nodes of the tenants this provisioner checks (docs/providers.md, Node health). Every `intervalMs` a
 * round groups the tenants' targets into batches by provider type and the provider's `batchOf` (across tenants:
 * one Docker host is one batch) and starts a check of each batch that has none in flight; each finished check
 * publishes the nodes whose finding changed, per tenant, and every `fullReportMs` each tenant's every node is
 * reported. A tenant's targets are followed with a KV watch while it is checked here; a tenant's on-demand checks
 * are answered on `healthCheckSubject(tenant)` meanwhile.
 */
export function startHealthChecker(options: HealthCheckerOptions): HealthChecker {
  const { log, nc } = options;
  const now = options.now ?? Date.now;
  const fullReportMs = options.fullReportMs ?? Math.max(60_000, 10 * options.intervalMs);
  const checkTimeoutMs = options.checkTimeoutMs ?? Math.max(5_000, Math.min(options.intervalMs, 60_000));
  const stopping = new AbortController();
  const followed = new Map<string, { targets: TenantTargets; requests: Subscription; reported: ReportedHealth }>();
  /** The check of each batch in flight (at most one): periodic rounds skip a busy batch, on-demand checks queue. */
  const inFlight = new Map<string, Promise<unknown>>();

  const follow = (tenant: string) => {
    let state = followed.get(tenant);
    if (state) return state;
    const requests = nc.subscribe(healthCheckSubject(tenant), {
      callback: (err, msg) => {
        if (err) return;
        void answer(tenant, msg.data).then((reply) => msg.respond(encode(reply)));
      },
    });
    state = { targets: options.store.follow(tenant), requests, reported: new ReportedHealth() };
    followed.set(tenant, state);
    return state;
  };

  const unfollow = async (tenant: string) => {
    const state = followed.get(tenant);
    if (!state) return;
    followed.delete(tenant);
    state.requests.unsubscribe();
    await state.targets.stop();
  };

  /** Follows the tenants checked here now, stops following the others. */
  const syncTenants = async () => {
    const wanted = options.tenants();
    for (const tenant of wanted) follow(tenant);
    await Promise.all([...followed.keys()].filter((t) => !wanted.has(t)).map(unfollow));
  };

  const batchesOf = (due: readonly Due[]): Map<string, Batch> => {
    const batches = new Map<string, Batch>();
    for (const node of due) {
      const type = String(node.target.config.provider?.providertype);
      const health = options.plugins.providers.get(type)?.health;
      const batch = health?.batchOf(node.target);
      if (!health || batch === undefined) continue;
      const key = `${type}\u0000${batch}`;
      let group = batches.get(key);
      if (!group) batches.set(key, (group = { health, nodes: [] }));
      group.nodes.push(node);
    }
    return batches;
  };

  /** Checks one batch and publishes its changes; answers every node's entry. Never throws. */
  const checkBatch = async (batch: Batch): Promise<Finding[]> => {
    const targets = batch.nodes.map((n) => n.target);
    const signal = AbortSignal.any([stopping.signal, AbortSignal.timeout(checkTimeoutMs)]);
    let found: NodeHealthCheck[];
    try {
      found = await batch.health.check(targets, { workDir: options.workDir, provisionerId: options.provisionerId, signal, log });
      if (!Array.isArray(found) || found.length !== targets.length) throw new Error(`the check answered ${Array.isArray(found) ? found.length : "no"} findings for ${targets.length} nodes`);
    } catch (err) {
      const why = signal.aborted && !stopping.signal.aborted ? `the check took longer than ${checkTimeoutMs} ms` : errorText(err);
      found = targets.map(() => ({ state: "unknown", message: `health check failed: ${why}` }));
    }
    const checkedAt = now();
    const findings = batch.nodes.map((node, i) => ({ key: node.key, tenant: node.target.tenant, entry: entryOf(node.target, found[i], checkedAt) }));
    report(findings);
    return findings;
  };

  /** Publishes the changes among `findings`, per tenant. */
  const report = (findings: readonly Finding[]) => {
    const byTenant = new Map<string, Finding[]>();
    for (const f of findings) {
      const list = byTenant.get(f.tenant);
      if (list) list.push(f);
      else byTenant.set(f.tenant, [f]);
    }
    for (const [tenant, list] of byTenant) {
      const state = followed.get(tenant);
      if (!state) continue;
      const changed = state.reported.record(list);
      if (changed.length > 0) publishHealthReport(nc, tenant, options.provisionerId, false, changed);
    }
  };

  /** The targets due this round: those of live clusters; those of clusters gone or terminated are removed. */
  const dueTargets = async (): Promise<Due[]> => {
    const reader = await options.clusters();
    const records = new Map<string, Promise<string | undefined>>();
    const orphaned = (target: HealthTarget) => {
      const id = `${target.tenant}\u0000${target.clusterId}`;
      let why = records.get(id);
      if (!why) records.set(id, (why = reader.get(target.clusterId).then((record) => orphanReason(record, target.tenant))));
      return why;
    };
    const due: Due[] = [];
    const stale: HealthTarget[] = [];
    const old: HealthTarget[] = [];
    for (const state of followed.values()) {
      const live = new Set<string>();
      for (const [key, target] of state.targets.current()) {
        if (await orphaned(target)) {
          stale.push(target);
          continue;
        }
        live.add(key);
        due.push({ key, target });
        if (now() - target.recordedAt > HEALTH_TARGET_MAX_AGE_MS / 2) old.push(target);
      }
      state.reported.keepOnly(live);
    }
    // In the background: neither may hold the round up.
    void mapLimit([...stale, ...old], 16, async (target, i) => {
      try {
        if (i < stale.length) await options.store.remove(target);
        else await options.store.put({ ...target, recordedAt: now() });
      } catch (err) {
        log.warn("health: a target could not be removed or renewed", { tenant: target.tenant, nodeId: target.nodeId, err });
      }
    });
    return due;
  };

  const round = async (): Promise<void> => {
    await syncTenants();
    const started: Promise<unknown>[] = [];
    for (const [key, batch] of batchesOf(await dueTargets())) {
      if (inFlight.has(key)) continue;
      const run = checkBatch(batch).finally(() => inFlight.delete(key));
      inFlight.set(key, run);
      started.push(run);
    }
    await Promise.all(started);
  };

  const checkNow = async (tenant: string, request: HealthCheckRequest): Promise<NodeHealthEntry[]> => {
    const state = followed.get(tenant);
    if (!state) return [];
    const wanted = request.nodeIds ? new Set(request.nodeIds) : undefined;
    const due: Due[] = [];
    for (const [key, target] of state.targets.current()) {
      if (request.clusterId !== undefined && target.clusterId !== request.clusterId) continue;
      if (wanted && !wanted.has(target.nodeId)) continue;
      due.push({ key, target });
    }
    const checks = [...batchesOf(due)].map(([key, batch]) => {
      const before = inFlight.get(key) ?? Promise.resolve();
      const run = before.catch(() => undefined).then(() => checkBatch(batch));
      const tracked = run.finally(() => {
        if (inFlight.get(key) === tracked) inFlight.delete(key);
      });
      inFlight.set(key, tracked);
      return run;
    });
    return (await Promise.all(checks)).flat().map((e) => e.entry);
  };

  const answer = async (tenant: string, data: Uint8Array): Promise<HealthCheckReply> => {
    let request: HealthCheckRequest = {};
    try {
      const decoded = data.length > 0 ? decode<HealthCheckRequest>(data) : {};
      if (typeof decoded === "object" && decoded !== null) request = decoded;
    } catch {
      // an unreadable request checks every node of the tenant
    }
    const nodes = await checkNow(tenant, {
      ...(typeof request.clusterId === "string" ? { clusterId: request.clusterId } : {}),
      ...(Array.isArray(request.nodeIds) ? { nodeIds: request.nodeIds.filter((id) => typeof id === "string") } : {}),
    }).catch((err: unknown) => {
      log.warn("health: an on-demand check failed", { tenant, err });
      return [];
    });
    return { provisionerId: options.provisionerId, nodes };
  };

  const fullReport = () => {
    for (const [tenant, state] of followed) {
      if (state.reported.size > 0) publishHealthReport(nc, tenant, options.provisionerId, true, state.reported.all());
    }
  };

  let rounding: Promise<void> | undefined;
  const roundTimer = setInterval(() => {
    rounding ??= round()
      .catch((err: unknown) => log.warn("health: a round of checks failed", { err }))
      .finally(() => (rounding = undefined));
  }, options.intervalMs);
  roundTimer.unref();
  const fullTimer = setInterval(fullReport, fullReportMs);
  fullTimer.unref();

  return {
    runRound: round,
    checkNow,
    async stop() {
      clearInterval(roundTimer);
      clearInterval(fullTimer);
      stopping.abort();
      await Promise.allSettled([...inFlight.values()]);
      await rounding;
      await Promise.all([...followed.keys()].map(unfollow));
    },
  };
}

/** A plugin's finding as a report entry; a malformed one is `unknown`. */
function entryOf(target: HealthTarget, found: NodeHealthCheck | undefined, checkedAt: number): NodeHealthEntry {
  const valid = found !== undefined && (NODE_HEALTH_STATES as readonly string[]).includes(found.state) && typeof found.message === "string";
  return {
    clusterId: target.clusterId,
    nodeId: target.nodeId,
    state: valid ? found.state : "unknown",
    message: valid ? found.message : "health check failed: the provider gave no valid finding",
    checkedAt,
  };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
