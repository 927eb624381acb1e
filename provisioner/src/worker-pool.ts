import type { Logger } from "@corral/shared";
import type { WorkerLoop } from "./worker-loop.js";

export interface WorkerPoolDeps {
  /** Most loops this provisioner runs at once. */
  capacity: number;
  startLoop: (tenant: string, workerId: string) => WorkerLoop;
  /** Called whenever the set of running loops changes (usage changed). */
  onChange: () => void;
  log: Logger;
}

/** The worker loops of one provisioner, per tenant, kept at the assigned numbers. */
export interface WorkerPool {
  /** Starts or stops loops so each tenant has `desired[tenant]` (capped to the capacity in total). */
  apply(desired: Readonly<Record<string, number>>): void;
  /** tenant -> loops alive now (a stopping loop counts until its task is done). */
  usage(): Record<string, number>;
  /** Loops alive now that run a task (busy) and that wait for one (idle). */
  loopStates(): { busy: number; idle: number };
  /** Stops every loop; settles once all ended. */
  stopAll(): Promise<void>;
}

export function createWorkerPool(deps: WorkerPoolDeps): WorkerPool {
  /** Loops that take tasks, per tenant, oldest first. */
  const active = new Map<string, WorkerLoop[]>();
  /** Every loop not yet ended, stopping or not. */
  const alive = new Set<WorkerLoop>();
  let serial = 0;

  const start = (tenant: string) => {
    const loop = deps.startLoop(tenant, `${tenant}-${++serial}`);
    alive.add(loop);
    void loop.done.finally(() => {
      alive.delete(loop);
      deps.onChange();
    });
    return loop;
  };

  return {
    apply(desired) {
      const capped = capToCapacity(desired, deps.capacity);
      if (sum(capped) < sum(desired)) {
        deps.log.warn("assignment exceeds capacity; running fewer workers", { capacity: deps.capacity, desired });
      }
      let changed = false;
      for (const tenant of new Set([...active.keys(), ...Object.keys(capped)])) {
        const want = capped[tenant] ?? 0;
        const loops = active.get(tenant) ?? [];
        while (loops.length < want) {
          loops.push(start(tenant));
          changed = true;
        }
        while (loops.length > want) {
          loops.pop()?.stop(); // newest first
          changed = true;
        }
        if (loops.length) active.set(tenant, loops);
        else active.delete(tenant);
      }
      if (changed) {
        deps.log.info("workers changed", { workers: Object.fromEntries([...active].map(([t, l]) => [t, l.length])) });
        deps.onChange();
      }
    },
    usage() {
      const usage: Record<string, number> = {};
      for (const loop of alive) usage[loop.tenant] = (usage[loop.tenant] ?? 0) + 1;
      return usage;
    },
    loopStates() {
      let busy = 0;
      for (const loop of alive) if (loop.isBusy) busy++;
      return { busy, idle: alive.size - busy };
    },
    async stopAll() {
      for (const loops of active.values()) for (const loop of loops) loop.stop();
      active.clear();
      await Promise.all([...alive].map((l) => l.done));
    },
  };
}

/** Keeps the assignment within capacity, tenants in name order. */
function capToCapacity(desired: Readonly<Record<string, number>>, capacity: number): Record<string, number> {
  const out: Record<string, number> = {};
  let left = capacity;
  for (const tenant of Object.keys(desired).sort()) {
    const n = Math.max(0, Math.min(left, Math.floor(desired[tenant] ?? 0)));
    if (n > 0) out[tenant] = n;
    left -= n;
  }
  return out;
}

const sum = (r: Readonly<Record<string, number>>) => Object.values(r).reduce((a, b) => a + Math.max(0, Math.floor(b)), 0);
