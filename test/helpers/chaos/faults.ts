/**
 * The fault injector of the chaos suite. Two lanes run until stopped: the kill lane goes round every target in a
 * fresh random order each round (each service instance, each provisioner, each NATS node, Redis; kinds taken in
 * turn, so a short run hits every kind early), SIGKILLs it at a
 * random moment, leaves it down a random while and starts it again (NATS nodes one at a time: a node is back and
 * healthy before the next fault); the pause lane SIGSTOPs a process (provisioners and services in turn) for longer
 * than its timeouts, then SIGCONTs it. Every fault is kept with its times.
 */
import { TASK_ACK_WAIT_MS } from "@corral/contracts";
import { sleep } from "@corral/shared";
import { signal, type ChaosSystem, type Slot } from "./chaos-system.js";

export type FaultKind = "service" | "provisioner" | "nats-node" | "redis" | "pause";

export interface Fault {
  kind: FaultKind;
  target: string;
  /** The process hit (none for NATS nodes and Redis, whose servers the helpers own). */
  pid?: number;
  /** ms: when it was killed or stopped, when it ran again (restarted and ready, or continued). */
  at: number;
  recoveredAt?: number;
  /** Failed attempts to start the target again (a NATS node not healthy in time, ...). */
  recoveryErrors?: string[];
}

export interface FaultOptions {
  /** Random pause between two faults of the kill lane, ms. @default [1000, 4000] */
  gapMs?: [number, number];
  /** How long a killed target stays down, ms. @default [200, 2000] */
  downMs?: [number, number];
  /** How long a paused process stays stopped: past the task ack wait and the gateway's request timeout. @default 18000 */
  pauseMs?: number;
  /** Random pause between two pauses, ms. @default [2000, 8000] */
  pauseGapMs?: [number, number];
  random?: () => number;
}

export interface FaultInjector {
  readonly faults: readonly Fault[];
  /** Ends both lanes after their current fault (every target running again) and answers every fault. */
  stop(): Promise<Fault[]>;
}

type Target = { kind: Exclude<FaultKind, "pause">; name: string; hit(fault: Fault): Promise<void>; recover(): Promise<void> };

export function startFaultInjector(sys: ChaosSystem, options: FaultOptions = {}): FaultInjector {
  const random = options.random ?? Math.random;
  const between = ([lo, hi]: [number, number]) => lo + random() * (hi - lo);
  const faults: Fault[] = [];
  const stopping = new AbortController();
  /** Sleeps `ms` unless stopped meanwhile. */
  const nap = (ms: number) => sleep(ms, stopping.signal);

  const slotTarget = (slot: Slot): Target => ({
    kind: slot.kind,
    name: slot.name,
    async hit(fault) {
      fault.pid = slot.current().pid;
      await slot.current().kill("SIGKILL");
    },
    recover: () => slot.restart(),
  });
  const targets: Target[] = [
    ...sys.services.map(slotTarget),
    ...sys.provisioners.map(slotTarget),
    ...sys.nats.urls.map(
      (_, i): Target => ({ kind: "nats-node", name: `nats-${i}`, hit: () => sys.nats.killNode(i), recover: () => sys.nats.restartNode(i) }),
    ),
    { kind: "redis", name: "redis", hit: () => sys.killRedis(), recover: () => sys.restartRedis() },
  ];

  /** Starts a target again, three tries; false (the lane ends: the system stays degraded) when none worked. */
  const recover = async (target: Target, fault: Fault): Promise<boolean> => {
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        await target.recover();
        fault.recoveredAt = Date.now();
        return true;
      } catch (err) {
        (fault.recoveryErrors ??= []).push(String(err instanceof Error ? err.message : err).slice(0, 500));
      }
    }
    return false;
  };

  const killLane = (async () => {
    while (!stopping.signal.aborted) {
      for (const target of interleavedByKind(targets, random)) {
        await nap(between(options.gapMs ?? [1_000, 4_000]));
        if (stopping.signal.aborted) return;
        const fault: Fault = { kind: target.kind, target: target.name, at: Date.now() };
        faults.push(fault);
        await target.hit(fault);
        await new Promise((r) => setTimeout(r, between(options.downMs ?? [200, 2_000])));
        if (!(await recover(target, fault))) return;
      }
    }
  })();

  const pauseLane = (async () => {
    const pausable = [sys.provisioners, sys.services];
    for (let turn = 0; !stopping.signal.aborted; turn++) {
      await nap(between(options.pauseGapMs ?? [2_000, 8_000]));
      if (stopping.signal.aborted) return;
      const group = pausable[turn % pausable.length] ?? [];
      const slot = group[Math.floor(random() * group.length)];
      if (!slot) continue;
      const pid = slot.current().pid;
      const fault: Fault = { kind: "pause", target: slot.name, pid, at: Date.now() };
      faults.push(fault);
      signal(pid, "SIGSTOP");
      await new Promise((r) => setTimeout(r, options.pauseMs ?? TASK_ACK_WAIT_MS + 3_000));
      signal(pid, "SIGCONT");
      fault.recoveredAt = Date.now();
    }
  })();

  return {
    faults,
    async stop() {
      stopping.abort();
      await Promise.all([killLane, pauseLane]);
      return faults;
    },
  };
}

/** Targets in random order within their kind, the kinds (in random order) taking turns. */
function interleavedByKind(targets: readonly Target[], random: () => number): Target[] {
  const groups = shuffled([...new Set(targets.map((t) => t.kind))], random).map((kind) => shuffled(targets.filter((t) => t.kind === kind), random));
  const out: Target[] = [];
  for (let i = 0; out.length < targets.length; i++) {
    for (const g of groups) {
      const target = g[i];
      if (target) out.push(target);
    }
  }
  return out;
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Faults by kind. */
export function countFaults(faults: readonly Fault[]): Record<FaultKind, number> {
  const out: Record<FaultKind, number> = { service: 0, provisioner: 0, "nats-node": 0, redis: 0, pause: 0 };
  for (const f of faults) out[f.kind]++;
  return out;
}
