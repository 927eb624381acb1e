import {
  NotFoundError,
  isProvisionerAlive,
  type Provisioner,
  type ProvisionerRecord,
  type WorkerAssignment,
} from "@corral/contracts";
import type { EndpointHandlers } from "@corral/shared";
import type { RegistryStore } from "../adapters/registry-store.js";

const byId = (a: Provisioner, b: Provisioner) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A number the record may lack or hold as something else: counts are non-negative integers. */
const count = (value: unknown) =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;

/** Only tenant -> count pairs, copied with fromEntries (a key may be `__proto__`). */
function counts(value: unknown): Record<string, number> {
  if (typeof value !== "object" || value === null) return {};
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .map(([tenant, n]): [string, number] => [tenant, count(n)])
      .filter(([, n]) => n > 0),
  );
}

/**
 * A provisioner as the API shows it: the record the provisioner wrote and what the balancer assigned it. `capacityFree`
 * is what the assignment leaves of the capacity (0, not negative, while a capacity just lowered is being rebalanced).
 */
function describe(record: ProvisionerRecord, assignment: WorkerAssignment): Provisioner {
  const capacityTotal = count(record.capacityTotal);
  const assignments = counts(assignment[record.id]);
  const assigned = Object.values(assignments).reduce((sum, n) => sum + n, 0);
  return {
    id: record.id,
    host: record.host,
    port: record.port,
    capacityTotal,
    capacityFree: Math.max(0, capacityTotal - assigned),
    assignments,
    usage: counts(record.usage),
  };
}

/**
 * `GET /provisioners` and `/provisioners/{id}` (superadmin only, which the gateway checks): live provisioners only; a
 * dead one is not found.
 */
export function provisionerHandlers(registry: RegistryStore, now: () => number) {
  const isLive = (record: ProvisionerRecord | undefined): record is ProvisionerRecord =>
    record !== undefined &&
    typeof record.id === "string" &&
    typeof record.lastHeartbeat === "number" &&
    isProvisionerAlive(record, now());
  return {
    "tenancy.provisioners.list": async () => {
      const [records, assignment] = await Promise.all([registry.provisioners(), registry.assignment()]);
      return records
        .filter(isLive)
        .map((r) => describe(r, assignment))
        .sort(byId);
    },
    "tenancy.provisioners.get": async (req) => {
      const { id } = req.params;
      const [record, assignment] = await Promise.all([registry.provisioner(id), registry.assignment()]);
      if (!isLive(record) || record.id !== id) throw new NotFoundError("provisioner", id);
      return describe(record, assignment);
    },
  } satisfies EndpointHandlers<"tenancy">;
}
