import { encode, kvKey } from "@corral/contracts";
import {
  BoundedCache,
  mapLimit,
  modifyValue,
  purgeKeys,
  putValue,
  readValue,
  RevisionCache,
  type KV,
  type Modification,
  type Versioned,
} from "@corral/shared";
import { TASKS_PER_PAGE, type PlanRecord, type StoredTask } from "../domain/records.js";

/** Reads of plans: what every layer may do (only the actors write plans: {@link PlanStore}). */
export interface PlanReader {
  get(clusterId: string, planId: string): Promise<Versioned<PlanRecord> | undefined>;
  /**
   * A version of the plan that may be behind: only for what never changes after creation (stages, action,
   * tenant). Served from memory when this process has seen the plan.
   */
  fixedPartsOf(clusterId: string, planId: string): Promise<PlanRecord | undefined>;
  /** The tasks of one stage, in order. */
  stageTasks(plan: PlanRecord, stage: number): Promise<StoredTask[]>;
  /** One task by its position in a stage (reads only its page). */
  stageTask(plan: PlanRecord, stage: number, position: number): Promise<StoredTask | undefined>;
}

/** Plans: a header with the actor, and the tasks of each stage in it (a small plan) or in pages of TASKS_PER_PAGE. */
export interface PlanStore extends PlanReader {
  /**
   * Writes the task pages, then the header; a header is only ever visible with all its tasks. A record that holds
   * its tasks (`PlanRecord.tasks`) has no pages.
   */
  create(record: PlanRecord, stages: readonly (readonly StoredTask[])[]): Promise<void>;
  modify(
    clusterId: string,
    planId: string,
    fn: (current: Versioned<PlanRecord> | undefined) => Modification<PlanRecord>,
  ): Promise<PlanRecord | undefined>;
  /** Removes every plan of a cluster and its task pages, with their history (tenant deletion). */
  removeCluster(clusterId: string): Promise<void>;
}

const pageKey = (plan: { clusterId: string; id: string }, stage: number, page: number) =>
  kvKey(plan.clusterId, plan.id, String(stage), String(page));

/** Pages never change once written: up to this many tasks stay in memory, least recently used out first. */
const CACHED_TASKS = 100_000;

export function createPlanStore(plans: KV, planTasks: KV): PlanStore {
  const headers = new RevisionCache(20_000);
  // A page being read counts as full until its size is known.
  const pages = new BoundedCache<string, Promise<StoredTask[]>>({ maxWeight: CACHED_TASKS });
  const readPage = (plan: PlanRecord, stage: number, p: number) => {
    const key = pageKey(plan, stage, p);
    const cached = pages.get(key);
    if (cached) return cached;
    const read = readValue<StoredTask[]>(planTasks, key).then((found) => {
      if (!found) throw new Error(`plan ${plan.id} stage ${stage} page ${p} is missing`);
      return found.value;
    });
    read.then(
      (tasks) => {
        if (pages.get(key) === read) pages.set(key, read, tasks.length);
      },
      () => {
        if (pages.get(key) === read) pages.delete(key);
      },
    );
    pages.set(key, read, TASKS_PER_PAGE);
    return read;
  };
  const get = (clusterId: string, planId: string) => readValue<PlanRecord>(plans, kvKey(clusterId, planId), headers);

  return {
    get,
    async fixedPartsOf(clusterId, planId) {
      return headers.peek<PlanRecord>(kvKey(clusterId, planId))?.value ?? (await get(clusterId, planId))?.value;
    },
    async create(record, stages) {
      const written: Array<{ key: string; tasks: StoredTask[] }> = [];
      if (!record.tasks) stages.forEach((tasks, stage) => {
        for (let p = 0; p * TASKS_PER_PAGE < tasks.length; p++) {
          written.push({ key: pageKey(record, stage, p), tasks: tasks.slice(p * TASKS_PER_PAGE, (p + 1) * TASKS_PER_PAGE) });
        }
      });
      await mapLimit(written, 64, (page) => planTasks.put(page.key, encode(page.tasks)));
      for (const page of written) pages.set(page.key, Promise.resolve(page.tasks), page.tasks.length);
      await putValue(plans, kvKey(record.clusterId, record.id), record, headers);
    },
    async modify(clusterId, planId, fn) {
      return (await modifyValue<PlanRecord>(plans, kvKey(clusterId, planId), fn, { cache: headers })).value;
    },
    async stageTasks(plan, stage) {
      if (plan.tasks) return [...(plan.tasks[stage] ?? [])];
      const size = plan.stageSizes[stage] ?? 0;
      const pageCount = Math.ceil(size / TASKS_PER_PAGE);
      const read = await mapLimit(Array.from({ length: pageCount }, (_, p) => p), 16, (p) => readPage(plan, stage, p));
      return read.length === 1 ? [...(read[0] ?? [])] : read.flat();
    },
    async stageTask(plan, stage, position) {
      if (position < 0 || position >= (plan.stageSizes[stage] ?? 0)) return undefined;
      if (plan.tasks) return plan.tasks[stage]?.[position];
      const page = await readPage(plan, stage, Math.floor(position / TASKS_PER_PAGE));
      return page[position % TASKS_PER_PAGE];
    },
    async removeCluster(clusterId) {
      const under = `${kvKey(clusterId)}.>`;
      await Promise.all([purgeKeys(plans, under), purgeKeys(planTasks, under)]);
    },
  };
}
