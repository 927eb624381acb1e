/**
 * The chaos suite's verdict, from stored state (KV, the results stream) and the side-effect record:
 * - final state: every cluster settled as its last operation should leave it (and passes `clusterProblems`);
 * - lost tasks: a task of any of a cluster's plans without a complete entry in its node's history, except in a
 *   failed plan the tasks of the failed stage and after it (never run by design; the cluster's state shows the failure);
 * - lost results: a successful result in the results stream that its node's history does not show as complete;
 * - duplicated side effects: a call that ran again although an earlier successful run of the same side effect had
 *   its result stored before the later one started (the earlier attempt was not proven failed: its result was
 *   neither missing, nor failed, nor late, that is published by another run or only after the later one began).
 */
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { streams, tenantStreamFilters, type TaskResult } from "@corral/contracts";
import { resultsOf } from "@corral/shared";
import { clusterProblems, openClusterState, type ClusterNode, type ClusterState, type PlanRecord } from "../cluster-state.js";
import { effectKey, type SideEffect } from "./side-effects.js";

export interface ClusterExpectation {
  id: string;
  status: "active" | "terminated";
}

export interface Verdict {
  clustersChecked: number;
  /** Clusters not in the state their last operation should leave them in, with what is wrong. */
  wrongState: Array<{ id: string; problems: string[] }>;
  lostTasks: string[];
  lostResults: string[];
  /** Tasks of earlier plans whose node history no longer reaches back to them (bounded history). */
  unverifiableTasks: number;
  /** Tasks of failed plans, from the failed stage on, that did not complete: not lost, the plan stopped there. */
  tasksStoppedByFailure: number;
  duplicatedSideEffects: Array<{ effect: string; first: SideEffect; again: SideEffect; stored: StoredResult | undefined }>;
  /** Runs that were repeated after the earlier one was proven failed (allowed), by why. */
  provenFailedReruns: Record<"failed" | "result missing" | "result late", number>;
  sideEffects: number;
  results: number;
}

export async function checkChaos(nc: NatsConnection, tenant: string, clusters: readonly ClusterExpectation[], effects: readonly SideEffect[]): Promise<Verdict> {
  const state = await openClusterState(nc);
  const results = await readResults(nc, tenant);
  const verdict: Verdict = {
    clustersChecked: clusters.length,
    wrongState: [],
    lostTasks: [],
    lostResults: [],
    unverifiableTasks: 0,
    tasksStoppedByFailure: 0,
    duplicatedSideEffects: [],
    provenFailedReruns: { failed: 0, "result missing": 0, "result late": 0 },
    sideEffects: effects.length,
    results: results.size,
  };
  const completeTasks = new Set<string>();
  for (const expected of clusters) {
    const problems = await clusterProblems(state, expected.id, expected.status);
    if (problems.length > 0) verdict.wrongState.push({ id: expected.id, problems });
    await checkPlans(state, expected.id, verdict, completeTasks);
  }
  const ours = new Set(clusters.map((c) => c.id));
  for (const [key, result] of results) {
    if (result.status === 0 && ours.has(result.clusterId) && !completeTasks.has(result.taskId)) verdict.lostResults.push(key);
  }
  checkDuplicates(effects.filter((e) => e.tenant === tenant && ours.has(e.clusterId)), results, verdict);
  return verdict;
}

/** Every task of every plan of the cluster has a complete entry in its node's history. */
async function checkPlans(state: ClusterState, clusterId: string, verdict: Verdict, completeTasks: Set<string>): Promise<void> {
  const cluster = (await state.cluster(clusterId))?.value;
  if (!cluster) return;
  const nodes = new Map<string, ClusterNode>((await state.nodes(cluster)).map((n) => [n.id, n]));
  for (const node of nodes.values()) for (const a of node.actions) if (a.status === "complete") completeTasks.add(a.taskId);
  for (const planId of cluster.jobs) {
    const plan = (await state.plan(clusterId, planId))?.value;
    if (!plan) {
      verdict.lostTasks.push(`${clusterId}: plan ${planId} is not stored`);
      continue;
    }
    const stoppedFrom = failedStageStart(plan);
    for (const [index, task] of (await state.planTasks(plan)).entries()) {
      if (completeTasks.has(task.taskId)) continue;
      if (stoppedFrom !== undefined && index >= stoppedFrom) {
        verdict.tasksStoppedByFailure++;
        continue;
      }
      const oldestKept = nodes.get(task.nodeId)?.actions[0]?.submitTime;
      if (oldestKept !== undefined && oldestKept > plan.createTime) verdict.unverifiableTasks++;
      else verdict.lostTasks.push(`${task.taskId} (${task.taskName} ${task.service ?? ""} on ${task.nodeId})`);
    }
  }
}

/** The index of the first task of a failed plan's failed stage; undefined for any other plan. */
export function failedStageStart(plan: PlanRecord): number | undefined {
  const failedIndex = plan.actor.value === "failed" ? plan.actor.context.failure?.index : undefined;
  if (failedIndex === undefined) return undefined;
  let start = 0;
  for (const size of plan.stageSizes) {
    if (failedIndex < start + size) return start;
    start += size;
  }
  return start;
}

/** A result as the stream holds it: when it was stored (ms), not only when its run ended. */
export interface StoredResult extends TaskResult {
  storedAt: number;
}

/** Results of the tenant by `<taskId>.<dispatch>` (messages are counted; one may hold several results). */
async function readResults(nc: NatsConnection, tenant: string): Promise<Map<string, StoredResult>> {
  const filter = tenantStreamFilters(tenant)[streams.results];
  const info = await (await jetstreamManager(nc)).streams.info(streams.results, { subjects_filter: filter });
  const expected = Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  const out = new Map<string, StoredResult>();
  if (expected === 0) return out;
  const consumer = await jetstream(nc).consumers.get(streams.results, { filter_subjects: [filter], deliver_policy: DeliverPolicy.All });
  let seen = 0;
  while (seen < expected) {
    const batch = await consumer.fetch({ max_messages: Math.min(expected - seen, 5_000), expires: 5_000 });
    let got = 0;
    for await (const m of batch) {
      // A message holds one result or a provisioner's batch of one plan's (result-messages.ts).
      for (const r of resultsOf(m.data)) out.set(`${r.taskId}.${r.dispatch}`, { ...r, storedAt: m.info.timestampNanos / 1e6 });
      got++;
    }
    if (got === 0) throw new Error(`read ${seen} of ${expected} results of ${tenant}`);
    seen += got;
  }
  return out;
}

function checkDuplicates(effects: readonly SideEffect[], results: ReadonlyMap<string, StoredResult>, verdict: Verdict): void {
  const byEffect = new Map<string, SideEffect[]>();
  for (const e of effects) {
    const list = byEffect.get(effectKey(e)) ?? [];
    list.push(e);
    byEffect.set(effectKey(e), list);
  }
  for (const [effect, runs] of byEffect) {
    runs.sort((a, b) => a.startedAt - b.startedAt);
    runs.forEach((again, i) => {
      if (i === 0) return;
      const earlier = runs.slice(0, i);
      const standing = earlier.find((first) => whyFailed(first, again, results) === undefined);
      if (standing) verdict.duplicatedSideEffects.push({ effect, first: standing, again, stored: results.get(`${standing.taskId}.${standing.dispatch}`) });
      else {
        const why = whyFailed(earlier[earlier.length - 1]!, again, results);
        if (why) verdict.provenFailedReruns[why]++;
      }
    });
  }
}

/** Why `first` counts as a failed attempt by the time `again` started; undefined when it stood. */
function whyFailed(first: SideEffect, again: SideEffect, results: ReadonlyMap<string, StoredResult>): keyof Verdict["provenFailedReruns"] | undefined {
  if (first.status !== 0) return "failed";
  const stored = results.get(`${first.taskId}.${first.dispatch}`);
  // Ids repeat after a restart, so the run a result came from is told by its start time as well.
  const fromFirst = stored && stored.provisionerId === first.provisionerId && stored.workerId === first.workerId && Math.abs(stored.startTime - first.startedAt) < 1_000;
  if (!stored || !fromFirst) return "result missing";
  if (stored.status !== 0) return "failed";
  if (stored.storedAt >= again.startedAt) return "result late";
  return undefined;
}

/** Counts of a verdict, for the results file. */
export function verdictSummary(v: Verdict) {
  return {
    clustersChecked: v.clustersChecked,
    clustersInWrongState: v.wrongState.length,
    lostTasks: v.lostTasks.length,
    lostResults: v.lostResults.length,
    duplicatedSideEffects: v.duplicatedSideEffects.length,
    provenFailedReruns: v.provenFailedReruns,
    unverifiableTasks: v.unverifiableTasks,
    tasksStoppedByFailure: v.tasksStoppedByFailure,
    sideEffectsRecorded: v.sideEffects,
    resultsStored: v.results,
  };
}
