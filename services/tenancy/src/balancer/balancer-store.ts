import type { NatsConnection } from "@nats-io/transport-node";
import {
  ASSIGNMENT_KEY,
  PROVISIONER_DEAD_AFTER_MS,
  buckets,
  type ProvisionerRecord,
  type WorkerAssignment,
} from "@corral/contracts";
import {
  isCasConflict,
  modifyValue,
  openBucket,
  type KV,
  type Logger,
} from "@corral/shared";
import type { TenantRecord } from "../adapters/tenant-store.js";
import { openKvView, type KvView } from "./kv-view.js";

/** A provisioner record with where it is stored, so it can be removed only if unchanged. */
export interface StoredProvisioner {
  key: string;
  revision: number;
  record: ProvisionerRecord;
}

/** What one balancing round works from. */
export interface BalancerInputs {
  /** tenant name -> workers wanted */
  workers: Record<string, number>;
  /** Every well-formed provisioner record, live or not. */
  provisioners: StoredProvisioner[];
  /** The assignment in force (`{}` when none was written yet). */
  assignment: WorkerAssignment;
}

/**
 * The balancer's view of the tenants, provisioners and assignments buckets (the only code of the balancer that
 * touches KV). Reads come from watched in-memory copies, caught up before each read, so a round every second
 * costs two stream-info requests and no consumer.
 */
export interface BalancerStore {
  /** The inputs, including every write acknowledged before the call; `undefined` until first loaded. */
  read(): Promise<BalancerInputs | undefined>;
  /**
   * Compare-and-set on the assignment: `decide` gets the stored assignment (maybe run more than once, so pure)
   * and returns the one to write, or `undefined` to leave it. Returns what is stored afterwards.
   */
  updateAssignment(decide: (current: WorkerAssignment) => WorkerAssignment | undefined): Promise<WorkerAssignment>;
  /** Removes a provisioner record unless it changed since `revision`; false when it did. */
  removeProvisioner(key: string, revision: number): Promise<boolean>;
  /** `listener` runs when a change may alter the balance: workers, provisioners coming or going, capacities. */
  onChange(listener: () => void): void;
  stop(): void;
}

export interface BalancerStoreOptions {
  /** How long a read waits for the copies to catch up before using what they have. @default 2000 */
  catchUpTimeoutMs?: number;
}

function isProvisionerRecord(value: unknown): value is ProvisionerRecord {
  const r = value as Partial<ProvisionerRecord> | null;
  return (
    typeof r === "object" &&
    r !== null &&
    typeof r.id === "string" &&
    typeof r.capacityTotal === "number" &&
    typeof r.lastHeartbeat === "number"
  );
}

function workersOf(record: TenantRecord | undefined): number | undefined {
  const workers = record?.tenant?.workers;
  return typeof workers === "number" ? workers : undefined;
}

/** A heartbeat alone changes nothing, unless it brings back a provisioner that had gone silent. */
function provisionerChangeMatters(before: unknown, after: unknown): boolean {
  if (!isProvisionerRecord(before) || !isProvisionerRecord(after)) return true;
  return (
    before.id !== after.id ||
    before.capacityTotal !== after.capacityTotal ||
    after.lastHeartbeat - before.lastHeartbeat >= PROVISIONER_DEAD_AFTER_MS
  );
}

class KvBalancerStore implements BalancerStore {
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly tenants: KvView<TenantRecord>,
    private readonly provisioners: KvView<unknown>,
    private readonly assignments: KvView<WorkerAssignment>,
    private readonly provisionersKv: KV,
    private readonly assignmentsKv: KV,
    private readonly catchUpTimeoutMs: number,
  ) {}

  notify(): void {
    for (const listener of this.listeners) listener();
  }

  async read(): Promise<BalancerInputs | undefined> {
    const views = [this.tenants, this.provisioners, this.assignments];
    if (!views.every((v) => v.isReady())) return undefined;
    await Promise.all(views.map((v) => v.caughtUp(this.catchUpTimeoutMs)));
    if (!views.every((v) => v.isReady())) return undefined;

    const wanted: Array<[string, number]> = [];
    for (const { value } of this.tenants.entries().values()) {
      const n = workersOf(value);
      const name = value?.tenant?.name;
      if (typeof name === "string" && n !== undefined) wanted.push([name, n]);
    }
    // fromEntries, not assignment: a tenant may be called `__proto__`.
    const workers: Record<string, number> = Object.fromEntries(wanted);

    const provisioners: StoredProvisioner[] = [];
    for (const [key, { value, revision }] of this.provisioners.entries()) {
      if (isProvisionerRecord(value)) provisioners.push({ key, revision, record: value });
    }
    const stored = this.assignments.entries().get(ASSIGNMENT_KEY)?.value;
    const assignment = typeof stored === "object" && stored !== null ? stored : {};
    return { workers, provisioners, assignment };
  }

  async updateAssignment(decide: (current: WorkerAssignment) => WorkerAssignment | undefined) {
    const { value } = await modifyValue<WorkerAssignment>(this.assignmentsKv, ASSIGNMENT_KEY, (current) => {
      const next = decide(current?.value ?? {});
      return next === undefined ? { keep: true } : { put: next };
    });
    return value ?? {};
  }

  async removeProvisioner(key: string, revision: number) {
    try {
      // Purge, not delete: no marker per departed provisioner is left behind.
      await this.provisionersKv.purge(key, { previousSeq: revision });
      return true;
    } catch (err) {
      if (isCasConflict(err)) return false;
      throw err;
    }
  }

  onChange(listener: () => void) {
    this.listeners.push(listener);
  }

  stop() {
    this.tenants.stop();
    this.provisioners.stop();
    this.assignments.stop();
  }
}

export async function openBalancerStore(
  nc: NatsConnection,
  log: Logger,
  options: BalancerStoreOptions = {},
): Promise<BalancerStore> {
  const [tenantsKv, provisionersKv, assignmentsKv] = await Promise.all([
    openBucket(nc, buckets.tenants),
    openBucket(nc, buckets.provisioners),
    openBucket(nc, buckets.assignments),
  ]);
  let store: KvBalancerStore | undefined;
  const notify = () => store?.notify();
  const opened = await Promise.allSettled([
    openKvView<TenantRecord>(tenantsKv, {
      log,
      name: "tenants",
      onChange: (_key, before, after) => {
        if (workersOf(before) !== workersOf(after)) notify();
      },
    }),
    openKvView<unknown>(provisionersKv, {
      log,
      name: "provisioners",
      onChange: (_key, before, after) => {
        if (provisionerChangeMatters(before, after)) notify();
      },
    }),
    openKvView<WorkerAssignment>(assignmentsKv, { log, name: "assignments" }),
  ] as const);
  const [tenants, provisioners, assignments] = opened;
  if (tenants.status === "rejected" || provisioners.status === "rejected" || assignments.status === "rejected") {
    for (const o of opened) if (o.status === "fulfilled") o.value.stop();
    const failed = opened.find((o): o is PromiseRejectedResult => o.status === "rejected");
    throw failed?.reason;
  }
  // Ready before the first round: a round on a half-loaded bucket would see workers or provisioners missing.
  await Promise.all([tenants.value.ready(), provisioners.value.ready(), assignments.value.ready()]);
  store = new KvBalancerStore(
    tenants.value,
    provisioners.value,
    assignments.value,
    provisionersKv,
    assignmentsKv,
    options.catchUpTimeoutMs ?? 2000,
  );
  return store;
}
