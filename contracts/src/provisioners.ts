/**
 * The provisioner registry and worker assignments (docs/architecture.md, Provisioners).
 *
 * - A provisioner writes its own record in bucket `corral_provisioners` (key `kvKey(id)`) when it starts and on
 *   every heartbeat, and its plugin specifications in `corral_plugintypes` (key `pluginTypeKey(kind, name)`).
 * - Tenancy balances every tenant's `workers` across live provisioners and writes the whole assignment as one
 *   value, key `ASSIGNMENT_KEY` in bucket `corral_assignments` (compare-and-set). Provisioners watch it.
 * - A provisioner whose heartbeat is older than `PROVISIONER_DEAD_AFTER_MS` is dead: its workers are moved.
 */

/** What a provisioner writes about itself. */
export interface ProvisionerRecord {
  id: string;
  host: string;
  port: number;
  capacityTotal: number;
  /** tenant -> worker loops running now */
  usage: Record<string, number>;
  /** ms */
  lastHeartbeat: number;
  /** ms */
  registeredAt: number;
  /** Plugin types it carries. */
  plugins: { providertypes: string[]; automatortypes: string[] };
}

/** provisioner id -> tenant -> workers to run there. */
export type WorkerAssignment = Record<string, Record<string, number>>;

export const ASSIGNMENT_KEY = "current";
export const PROVISIONER_HEARTBEAT_MS = 2_000;
export const PROVISIONER_DEAD_AFTER_MS = 8_000;

export function isProvisionerAlive(record: ProvisionerRecord, now: number): boolean {
  return now - record.lastHeartbeat < PROVISIONER_DEAD_AFTER_MS;
}
