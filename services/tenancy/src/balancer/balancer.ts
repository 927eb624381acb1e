import { PROVISIONER_DEAD_AFTER_MS, isProvisionerAlive, type WorkerAssignment } from "@corral/contracts";
import type { Logger } from "@corral/shared";
import { balance, isAssignableKey, sameAssignment, type BalanceResult } from "./balance.js";
import type { BalancerInputs, BalancerStore } from "./balancer-store.js";

export interface BalancerOptions {
  store: BalancerStore;
  log: Logger;
  /** ms since the epoch; compared with provisioners' `lastHeartbeat`. */
  now: () => number;
  /** A round runs this often, and at once when workers or provisioners change. @default 1000 */
  intervalMs?: number;
  /**
   * A provisioner silent this long has its record removed, so the registry does not grow forever.
   * @default 10 * PROVISIONER_DEAD_AFTER_MS (80 s)
   */
  removeDeadAfterMs?: number;
}

export function defaultBalancerOptions(): Required<Pick<BalancerOptions, "intervalMs" | "removeDeadAfterMs">> {
  return { intervalMs: 1000, removeDeadAfterMs: 10 * PROVISIONER_DEAD_AFTER_MS };
}

/** What one round did. */
export interface BalanceRound {
  /** The assignment in force after the round. */
  assignment: WorkerAssignment;
  /** Whether this round wrote it. */
  wrote: boolean;
  /** tenant -> workers that found no capacity */
  shortfall: Record<string, number>;
  /** Keys of provisioner records removed. */
  removed: string[];
}

export interface Balancer {
  /** Runs a round now (after the one in progress, if any) and returns what it did; `undefined` before loading. */
  runNow(): Promise<BalanceRound | undefined>;
  /** Idempotent. */
  stop(): Promise<void>;
}

/**
 * Keeps the worker assignment (bucket `assignments`, key `ASSIGNMENT_KEY`) balanced. Every tenancy instance
 * runs one; they need no leader: each round computes the assignment from what it read and writes it with
 * compare-and-set on the key, recomputing from the stored value when another instance wrote first, so no
 * instance overwrites an assignment it has not seen, and all converge on the same one (`balance` is
 * deterministic and a fixed point of its own output).
 */
export function startBalancer(options: BalancerOptions): Balancer {
  const { store, log, now } = options;
  const { intervalMs, removeDeadAfterMs } = { ...defaultBalancerOptions(), ...definedOnly(options) };
  if (!(intervalMs > 0)) throw new RangeError(`balancer intervalMs must be positive (got ${intervalMs})`);
  if (!(removeDeadAfterMs >= PROVISIONER_DEAD_AFTER_MS)) {
    throw new RangeError(
      "balancer removeDeadAfterMs must be at least PROVISIONER_DEAD_AFTER_MS " +
        `(${PROVISIONER_DEAD_AFTER_MS}; got ${removeDeadAfterMs})`,
    );
  }

  let stopped = false;
  let lastShortfall = "{}";
  let warnedUnassignable = false;

  const round = async (): Promise<BalanceRound | undefined> => {
    const inputs = await store.read();
    if (!inputs || stopped) return undefined;
    const at = now();
    const live = inputs.provisioners
      .filter((p) => isProvisionerAlive(p.record, at))
      .map((p) => ({ id: p.record.id, capacityTotal: p.record.capacityTotal }));
    const plan = (current: WorkerAssignment) => balance({ workers: inputs.workers, provisioners: live, current });

    let result: BalanceResult = plan(inputs.assignment);
    let assignment = inputs.assignment;
    let wrote = false;
    if (!sameAssignment(result.assignment, inputs.assignment)) {
      assignment = await store.updateAssignment((current) => {
        result = plan(current);
        wrote = !sameAssignment(result.assignment, current);
        return wrote ? result.assignment : undefined;
      });
      if (wrote) {
        const workers = Object.values(assignment).reduce((n, m) => n + Object.values(m).reduce((a, b) => a + b, 0), 0);
        log.info("worker assignment updated", { provisioners: Object.keys(assignment).length, workers });
        log.debug("worker assignment", { assignment });
      }
    }
    report(inputs, result, live);
    const removed = await removeDead(inputs, at);
    return { assignment, wrote, shortfall: result.shortfall, removed };
  };

  const report = (inputs: BalancerInputs, result: BalanceResult, live: Array<{ capacityTotal: number }>) => {
    const shortfall = JSON.stringify(result.shortfall);
    if (shortfall !== lastShortfall) {
      if (shortfall === "{}") log.info("worker capacity shortfall resolved");
      else {
        const capacity = live.reduce((sum, p) => sum + Math.max(0, p.capacityTotal), 0);
        log.warn("worker capacity short: tenants get fewer workers than asked", {
          shortfall: result.shortfall,
          capacity,
          liveProvisioners: live.length,
        });
      }
      lastShortfall = shortfall;
    }
    if (!warnedUnassignable && Object.keys(inputs.workers).some((t) => !isAssignableKey(t))) {
      warnedUnassignable = true;
      log.warn("a tenant named __proto__ cannot be given workers: the name does not survive msgpack");
    }
  };

  const removeDead = async (inputs: BalancerInputs, at: number): Promise<string[]> => {
    const removed: string[] = [];
    for (const p of inputs.provisioners) {
      if (stopped || at - p.record.lastHeartbeat < removeDeadAfterMs) continue;
      // Another instance may remove it first, or the provisioner come back: both are a lost compare-and-set.
      if (await store.removeProvisioner(p.key, p.revision)) {
        removed.push(p.key);
        log.info("removed the record of a long-dead provisioner", {
          id: p.record.id,
          lastHeartbeat: p.record.lastHeartbeat,
        });
      }
    }
    return removed;
  };

  // Rounds never overlap; requests during a round coalesce into one more round after it.
  let running: Promise<void> | undefined;
  let pending: Array<(r: BalanceRound | undefined) => void> = [];
  let requested = false;
  const drain = async () => {
    while (requested && !stopped) {
      requested = false;
      const waiting = pending;
      pending = [];
      let outcome: BalanceRound | undefined;
      try {
        outcome = await round();
      } catch (err) {
        log.warn("balancing round failed", { err });
      }
      for (const resolve of waiting) resolve(outcome);
    }
    for (const resolve of pending.splice(0)) resolve(undefined);
  };
  const kick = () => {
    requested = true;
    running ??= drain().finally(() => {
      running = undefined;
      if (requested && !stopped) kick();
    });
  };

  store.onChange(kick);
  const timer = setInterval(kick, intervalMs);
  timer.unref();
  kick();

  let stopping: Promise<void> | undefined;
  return {
    runNow() {
      if (stopped) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        pending.push(resolve);
        kick();
      });
    },
    stop() {
      stopping ??= (async () => {
        stopped = true;
        clearInterval(timer);
        await running;
      })();
      return stopping;
    },
  };
}

function definedOnly(options: BalancerOptions): Partial<Pick<BalancerOptions, "intervalMs" | "removeDeadAfterMs">> {
  const out: Partial<Pick<BalancerOptions, "intervalMs" | "removeDeadAfterMs">> = {};
  if (options.intervalMs !== undefined) out.intervalMs = options.intervalMs;
  if (options.removeDeadAfterMs !== undefined) out.removeDeadAfterMs = options.removeDeadAfterMs;
  return out;
}
