import { encode, kvKey, modifyValue, readValue, type KV, type Modification, type Versioned } from "@corral/shared";
import { TASKS_PER_PAGE, type PlanRecord, type StoredTask } from "../domain/records.js";
import { mapLimit } from "./buckets.js";

/** Plans: a header with the actor, and the tasks of each stage in pages of TASKS_PER_PAGE. */
export interface PlanStore {
  get(clusterId: string, planId: string): Promise<Versioned<PlanRecord> | undefined>;
  /** Writes the task pages, then the header; a header is only ever visible with all its tasks. */
  create(record: PlanRecord, stages: readonly (readonly StoredTask[])[]): Promise<void>;
  modify(
    clusterId: string,
    planId: string,
    fn: (current: Versioned<PlanRecord> | undefined) => Modification<PlanRecord>,
  ): Promise<PlanRecord | undefined>;
  /** The tasks of one stage, in order. */
  stageTasks(plan: PlanRecord, stage: number): Promise<StoredTask[]>;
}

const pageKey = (plan: { clusterId: string; id: string }, stage: number, page: number) =>
  kvKey(plan.clusterId, plan.id, String(stage), String(page));

export function createPlanStore(plans: KV, planTasks: KV): PlanStore {
  return {
    get: (clusterId, planId) => readValue<PlanRecord>(plans, kvKey(clusterId, planId)),
    async create(record, stages) {
      const pages: Array<{ key: string; tasks: readonly StoredTask[] }> = [];
      stages.forEach((tasks, stage) => {
        for (let p = 0; p * TASKS_PER_PAGE < tasks.length; p++) {
          pages.push({ key: pageKey(record, stage, p), tasks: tasks.slice(p * TASKS_PER_PAGE, (p + 1) * TASKS_PER_PAGE) });
        }
      });
      await mapLimit(pages, 64, (page) => planTasks.put(page.key, encode(page.tasks)));
      await plans.put(kvKey(record.clusterId, record.id), encode(record));
    },
    async modify(clusterId, planId, fn) {
      return (await modifyValue<PlanRecord>(plans, kvKey(clusterId, planId), fn)).value;
    },
    async stageTasks(plan, stage) {
      const size = plan.stageSizes[stage] ?? 0;
      const pageCount = Math.ceil(size / TASKS_PER_PAGE);
      const pages = await mapLimit(Array.from({ length: pageCount }, (_, p) => p), 16, async (p) => {
        const found = await readValue<StoredTask[]>(planTasks, pageKey(plan, stage, p));
        if (!found) throw new Error(`plan ${plan.id} stage ${stage} page ${p} is missing`);
        return found.value;
      });
      return pages.flat();
    },
  };
}
