import type { WorkerAssignment } from "@corral/contracts";

/**
 * Spreads every tenant's `workers` over live provisioners (docs/architecture.md, Provisioners). Pure and
 * deterministic: the same input (in any key or array order) gives the same output. Coopr's greedy balancer fills
 * provisioners in unspecified order, packs a tenant onto one provisioner and drops a capacity shortfall; this one
 * keeps what it can, spreads what it adds, shares a shortage fairly and reports it (docs/decisions.md, Workers are
 * balanced across provisioners).
 *
 * Rules, in the order applied:
 * 1. Keep: every placement of the current assignment on a live provisioner, for a tenant that still wants
 *    workers, stays (minimal movement).
 * 2. Trim tenants: a tenant holding more than it wants gives workers back one at a time from the provisioner
 *    holding the most of it (ties: the fuller provisioner, then id), so what remains stays spread.
 * 3. Trim provisioners: a provisioner whose capacity dropped below what it holds gives back one worker at a time
 *    of the tenant it holds the most of (ties: tenant name).
 * 4. Add: tenants still short take free capacity round-robin, one worker per tenant per round in name order (a
 *    shortage is shared: no tenant is left without workers while another gets a second round). Each worker goes
 *    to the provisioner with room that holds the fewest of that tenant, then the one with the most free
 *    capacity, then the smallest id: one provisioner's death takes as few of a tenant's workers as possible.
 *
 * Consequences (pinned by test/balancer-balance.test.ts): no provisioner over capacity; only live provisioners;
 * total assigned = min(total demand, total capacity); a shortfall only when no capacity is free; one change of a
 * tenant or a provisioner takes workers only from that tenant or provisioner, and no more than the change; a
 * second run on its own output changes nothing.
 */
export interface BalanceInput {
  /** tenant name -> workers wanted; 0, negative or non-numeric counts ask for nothing. */
  workers: Readonly<Record<string, number>>;
  /** The live provisioners only; a capacity that is not a positive number counts as 0. */
  provisioners: ReadonlyArray<{ readonly id: string; readonly capacityTotal: number }>;
  /** The assignment in force, or `{}`. Entries of dead or unknown provisioners and tenants are dropped. */
  current: Readonly<WorkerAssignment>;
}

export interface BalanceResult {
  /** provisioner id -> tenant -> workers; keys sorted, no zero counts, no empty maps. */
  assignment: WorkerAssignment;
  /** tenant -> workers that could not be placed for want of capacity; only tenants short of workers. */
  shortfall: Record<string, number>;
}

/**
 * Keys that cannot be used: msgpack decoders (ours included) rename `__proto__`, so an assignment holding it
 * would never read back as written (see `setOwn` in contracts/src/validation/primitives.ts).
 */
export function isAssignableKey(key: string): boolean {
  return key !== "__proto__";
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A count: a non-negative integer, anything else 0. */
function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

export function balance(input: BalanceInput): BalanceResult {
  // Demand, by tenant name in order.
  const demand = new Map<string, number>();
  for (const [tenant, wanted] of Object.entries(input.workers)) {
    const n = count(wanted);
    if (n > 0 && isAssignableKey(tenant)) demand.set(tenant, n);
  }
  const tenants = [...demand.keys()].sort(byCodePoint);

  // Live provisioners by id in order; a duplicated id keeps its largest capacity (order-independent).
  const capacity = new Map<string, number>();
  for (const p of input.provisioners) {
    if (!isAssignableKey(p.id)) continue;
    capacity.set(p.id, Math.max(capacity.get(p.id) ?? 0, count(p.capacityTotal)));
  }
  const ids = [...capacity.keys()].sort(byCodePoint);

  const placed = new Map<string, Map<string, number>>(ids.map((id) => [id, new Map()]));
  const used = new Map<string, number>(ids.map((id) => [id, 0]));
  const held = new Map<string, number>(tenants.map((t) => [t, 0]));
  const at = (id: string, tenant: string) => placed.get(id)?.get(tenant) ?? 0;
  const free = (id: string) => (capacity.get(id) ?? 0) - (used.get(id) ?? 0);
  const change = (id: string, tenant: string, delta: number) => {
    const here = placed.get(id);
    if (!here) return;
    const n = (here.get(tenant) ?? 0) + delta;
    if (n > 0) here.set(tenant, n);
    else here.delete(tenant);
    used.set(id, (used.get(id) ?? 0) + delta);
    held.set(tenant, (held.get(tenant) ?? 0) + delta);
  };

  // 1. Keep the valid placements.
  for (const [id, byTenant] of Object.entries(input.current)) {
    if (!placed.has(id) || typeof byTenant !== "object" || byTenant === null) continue;
    for (const [tenant, n] of Object.entries(byTenant)) {
      if (demand.has(tenant) && count(n) > 0) change(id, tenant, count(n));
    }
  }

  // 2. Tenants over their demand give back from where they hold the most.
  for (const tenant of tenants) {
    let excess = (held.get(tenant) ?? 0) - (demand.get(tenant) ?? 0);
    while (excess > 0) {
      let pick: string | undefined;
      for (const id of ids) {
        const n = at(id, tenant);
        if (n === 0) continue;
        if (pick === undefined) {
          pick = id;
          continue;
        }
        const best = at(pick, tenant);
        if (n > best || (n === best && free(id) < free(pick))) pick = id;
      }
      if (pick === undefined) break;
      change(pick, tenant, -1);
      excess--;
    }
  }

  // 3. Provisioners over their capacity give back of the tenant they hold the most of.
  for (const id of ids) {
    while (free(id) < 0) {
      let pick: string | undefined;
      for (const [tenant, n] of placed.get(id) ?? []) {
        const best = pick === undefined ? 0 : at(id, pick);
        if (pick === undefined || n > best || (n === best && tenant < pick)) pick = tenant;
      }
      if (pick === undefined) break;
      change(id, pick, -1);
    }
  }

  // 4. Short tenants share the free capacity round-robin.
  let totalFree = ids.reduce((sum, id) => sum + free(id), 0);
  let needy = tenants.filter((t) => (held.get(t) ?? 0) < (demand.get(t) ?? 0));
  while (totalFree > 0 && needy.length > 0) {
    for (const tenant of needy) {
      if (totalFree === 0) break;
      let pick: string | undefined;
      for (const id of ids) {
        if (free(id) <= 0) continue;
        if (pick === undefined) {
          pick = id;
          continue;
        }
        const n = at(id, tenant);
        const best = at(pick, tenant);
        if (n < best || (n === best && free(id) > free(pick))) pick = id;
      }
      if (pick === undefined) break;
      change(pick, tenant, 1);
      totalFree--;
    }
    needy = needy.filter((t) => (held.get(t) ?? 0) < (demand.get(t) ?? 0));
  }

  const assignment: WorkerAssignment = Object.fromEntries(
    ids
      .map((id): [string, Record<string, number>] => [
        id,
        Object.fromEntries([...(placed.get(id) ?? [])].sort(([a], [b]) => byCodePoint(a, b))),
      ])
      .filter(([, byTenant]) => Object.keys(byTenant).length > 0),
  );
  const shortfall: Record<string, number> = Object.fromEntries(
    tenants
      .map((t): [string, number] => [t, (demand.get(t) ?? 0) - (held.get(t) ?? 0)])
      .filter(([, n]) => n > 0),
  );
  return { assignment, shortfall };
}

/** True when two assignments place the same workers (key order and zero counts aside). */
export function sameAssignment(a: Readonly<WorkerAssignment>, b: Readonly<WorkerAssignment>): boolean {
  const flat = (x: Readonly<WorkerAssignment>) => {
    const out = new Map<string, number>();
    for (const [id, byTenant] of Object.entries(x)) {
      if (typeof byTenant !== "object" || byTenant === null) continue;
      for (const [tenant, n] of Object.entries(byTenant)) {
        if (n !== 0) out.set(`${id}\u0000${tenant}`, n);
      }
    }
    return out;
  };
  const fa = flat(a);
  const fb = flat(b);
  if (fa.size !== fb.size) return false;
  for (const [k, n] of fa) if (fb.get(k) !== n) return false;
  return true;
}

/** Workers assigned per tenant over all provisioners. */
export function assignedPerTenant(assignment: Readonly<WorkerAssignment>): Map<string, number> {
  const out = new Map<string, number>();
  for (const byTenant of Object.values(assignment)) {
    for (const [tenant, n] of Object.entries(byTenant)) out.set(tenant, (out.get(tenant) ?? 0) + n);
  }
  return out;
}
