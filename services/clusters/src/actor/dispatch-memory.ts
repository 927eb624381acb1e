import type { JsonObject } from "@corral/contracts";
import { BoundedCache } from "@corral/shared";
import type { ClusterRecord, PlanRecord } from "../domain/records.js";

/**
 * What this process knows about a running plan, so that publishing its later stages needs no reads.
 *
 * - The cluster record and the provider fields cannot change while a job runs (a job's changes are written
 *   in the same write that starts it, and every other operation is refused while it is busy): once known for a
 *   plan, they stay right for it.
 * - Nodes do change: every result is merged into its node before its event reaches the plan, and every event
 *   application counts the results in `PlanRecord.resultsApplied`. When that count only ever moved by this
 *   process's own applications since this process last knew every node, every node write since then was this
 *   process's too, so the node store's cached revisions are current. Any other move (another instance, a
 *   restart) makes the nodes unknown until they are read again.
 */
export interface PlanMemory {
  cluster: ClusterRecord;
  credentials: JsonObject;
  /** `resultsApplied` of the plan at which this process last knew every node; undefined: read them. */
  nodesCurrentAt: number | undefined;
}

/** Running plans remembered (each holds a cluster record); beyond this the oldest read again. */
const MAX_PLANS = 1_000;

export class DispatchMemory {
  private readonly plans = new BoundedCache<string, PlanMemory>({ maxEntries: MAX_PLANS });

  get(plan: Pick<PlanRecord, "clusterId" | "id">): PlanMemory | undefined {
    return this.plans.get(keyOf(plan));
  }

  remember(plan: Pick<PlanRecord, "clusterId" | "id">, memory: PlanMemory): void {
    this.plans.set(keyOf(plan), memory);
  }

  /** This process moved the plan's result count from `before` to `after` (its node writes came first). */
  resultsApplied(plan: Pick<PlanRecord, "clusterId" | "id">, before: number, after: number): void {
    const m = this.plans.get(keyOf(plan));
    if (m) m.nodesCurrentAt = m.nodesCurrentAt === before ? after : undefined;
  }

  forget(plan: Pick<PlanRecord, "clusterId" | "id">): void {
    this.plans.delete(keyOf(plan));
  }
}

const keyOf = (plan: Pick<PlanRecord, "clusterId" | "id">) => `${plan.clusterId}/${plan.id}`;
