import type { ReadingDeps } from "../adapters/deps.js";
import type { ClusterEvent } from "../domain/cluster-machine.js";
import { hasCurrentHead } from "../domain/cluster-record.js";
import { currentPlanOf, statusOf } from "../domain/cluster-status.js";
import { hasPlanEnded, pendingPlanActions, unpublishedSince, type PlanActorAction } from "../domain/plan-steps.js";
import type { ClusterRecord, PlanRecord } from "../domain/records.js";

/** What the reconciler hands owed work to: the actors (src/actor/ provides them; service.ts wires them in). */
export interface ReconcilerActors {
  /** Carries out actions a stored plan still owes; `republish`: read everything afresh, mark tasks republished. */
  effects: { ofPlan(plan: PlanRecord, actions: readonly PlanActorAction[], options?: { republish?: boolean }): Promise<void> };
  /** Deletes a cluster whose lease ended. */
  jobs: { expire(cluster: ClusterRecord): Promise<unknown> };
  /** Sends events to a cluster; none writes a record whose head is behind its actor anew. */
  clusters: { send(clusterId: string, events: readonly ClusterEvent[]): Promise<unknown> };
}

export interface ReconcilerOptions {
  /**
   * Dispatches decided this long ago and still not confirmed are published again; keep it well above
   * PUBLISHED_MARK_FLUSH_MS (actor/published-marks.ts), which a live publication's mark may wait. @default 10000
   */
  republishAfterMs?: number;
  /** Every this many runs, tenant usage is recounted from the clusters. @default 12 */
  recountEvery?: number;
  /** Provider fields stored this long ago without a running plan are removed. @default 60000 */
  fieldsGraceMs?: number;
}

/**
 * Re-derives pending work from stored state, so a process killed at any line (between an actor's write and its
 * effects included) loses nothing; what it finds owed goes to the same effects as a live write's actions:
 * - a plan whose dispatches were decided but not confirmed published is published again (JetStream drops the
 *   duplicates);
 * - a plan that ended while its cluster still says pending (killed between the two writes) finishes the job;
 * - clusters whose lease ended are deleted;
 * - tenant usage is recounted; a difference seen twice in a row is a leaked reservation and is repaired;
 * - provider fields no running plan needs (its plan ended, or was never started) are removed;
 * - a record written before heads had a status (or by an older instance) gets its head.
 */
export function createReconciler({ deps, actors }: { deps: ReadingDeps; actors: ReconcilerActors }, options: ReconcilerOptions = {}) {
  const republishAfterMs = options.republishAfterMs ?? 10_000;
  const recountEvery = options.recountEvery ?? 12;
  // Longer than any request takes between storing a plan's fields and starting the plan.
  const fieldsGraceMs = options.fieldsGraceMs ?? 60_000;
  let runs = 0;
  let lastRecount = new Map<string, string>();

  const reconcilePending = async (cluster: ClusterRecord) => {
    const plan = (await deps.plans.get(cluster.id, currentPlanOf(cluster)))?.value;
    if (!plan) return;
    if (hasPlanEnded(plan)) {
      await actors.effects.ofPlan(plan, pendingPlanActions(plan));
      return;
    }
    const since = unpublishedSince(plan);
    if (since !== undefined && deps.now() - since >= republishAfterMs) {
      deps.log.info("publishing dispatches again", { cluster: cluster.id, plan: plan.id });
      await actors.effects.ofPlan(plan, pendingPlanActions(plan), { republish: true });
    }
  };

  const deleteExpired = async (cluster: ClusterRecord) => {
    deps.log.info("lease ended; deleting cluster", { cluster: cluster.id });
    await actors.jobs.expire(cluster).catch((err: unknown) => {
      deps.log.warn("could not delete an expired cluster", { cluster: cluster.id, err });
    });
  };

  const isRunningPlan = async (cluster: ClusterRecord | undefined, planId: string) => {
    if (!cluster || statusOf(cluster) !== "pending" || currentPlanOf(cluster) !== planId) return false;
    const plan = (await deps.plans.get(cluster.id, planId))?.value;
    return plan !== undefined && !hasPlanEnded(plan);
  };

  const sweepProviderFields = async (clusters: ClusterRecord[], now: number) => {
    const byId = new Map(clusters.map((c) => [c.id, c]));
    for (const entry of await deps.credentials.entries()) {
      if (entry.planId !== undefined) {
        if (now - entry.writtenAt < fieldsGraceMs) continue;
        if (await isRunningPlan(byId.get(entry.clusterId), entry.planId)) continue;
      }
      deps.log.info("removing provider fields no running plan needs", { cluster: entry.clusterId, plan: entry.planId });
      await deps.credentials.remove(entry);
    }
  };

  const recount = async (clusters: ClusterRecord[]) => {
    const counted = new Map<string, { clusters: number; nodes: number }>();
    for (const c of clusters) {
      if (statusOf(c) === "terminated") continue;
      const u = counted.get(c.tenant) ?? { clusters: 0, nodes: 0 };
      counted.set(c.tenant, { clusters: u.clusters + 1, nodes: u.nodes + c.numNodes });
    }
    const current = new Map<string, string>();
    for (const c of clusters) if (!counted.has(c.tenant)) counted.set(c.tenant, { clusters: 0, nodes: 0 });
    for (const [tenant, usage] of counted) {
      const stored = await deps.usage.get(tenant);
      if (stored.clusters === usage.clusters && stored.nodes === usage.nodes) continue;
      const key = JSON.stringify({ stored, usage });
      current.set(tenant, key);
      if (lastRecount.get(tenant) === key) {
        deps.log.warn("repairing tenant usage", { tenant, stored, counted: usage });
        await deps.usage.set(tenant, usage);
      }
    }
    lastRecount = current;
  };

  return {
    async run(): Promise<void> {
      runs++;
      const clusters = await deps.clusters.all();
      const now = deps.now();
      for (const cluster of clusters) {
        const status = statusOf(cluster);
        try {
          if (!hasCurrentHead(cluster)) await actors.clusters.send(cluster.id, []);
          if (status === "pending") await reconcilePending(cluster);
          else if (status !== "terminated" && cluster.expireTime > 0 && cluster.expireTime <= now) await deleteExpired(cluster);
        } catch (err) {
          deps.log.warn("reconcile failed", { cluster: cluster.id, err });
        }
      }
      await sweepProviderFields(clusters, now).catch((err: unknown) => deps.log.warn("sweeping provider fields failed", { err }));
      if (runs % recountEvery === 0) await recount(clusters);
    },
  };
}
