import type { NatsConnection } from "@nats-io/transport-node";
import { decode, type WorkerAssignment } from "@corral/contracts";
import { followWatch, openAssignmentReader, type AssignmentReader, type Logger } from "@corral/shared";

export interface AssignmentWatcherDeps {
  nc: NatsConnection;
  log: Logger;
  /** This provisioner's id: its entry of the assignment is what counts. */
  id: string;
  /** Called with tenant -> workers for this provisioner whenever that changes (and once at start). */
  onChange: (mine: Record<string, number>) => void;
  /** Also read the key this often, in case the watch is broken without noticing. ms */
  pollMs: number;
}

export interface AssignmentWatcher {
  /** Reads the assignment once (applying it), then watches. Rejects when the first read fails. */
  start(): Promise<void>;
  /** Tenants with workers on any provisioner, as last read. */
  assignedAnywhere(): ReadonlySet<string>;
  /** The whole assignment as last read (empty before the first read). */
  assignment(): Readonly<WorkerAssignment>;
  stop(): Promise<void>;
}

/**
 * Follows the worker assignment (shared/src/assignments.ts) with a watch, plus a slow poll as a fallback (a
 * watch whose bucket was deleted and recreated goes quiet). Reads and applications are serialised, so a poll
 * never applies a value older than one the watch applied before it.
 */
export function createAssignmentWatcher(deps: AssignmentWatcherDeps): AssignmentWatcher {
  const stopping = new AbortController();
  let assignments: AssignmentReader | undefined;
  let last: string | undefined;
  let turn: Promise<unknown> = Promise.resolve();
  let pollTimer: NodeJS.Timeout | undefined;
  let watching: Promise<void> | undefined;
  let anywhere: ReadonlySet<string> = new Set();
  let whole: Readonly<WorkerAssignment> = {};

  /** Runs `fn` after every earlier read/apply. */
  const inTurn = <T>(fn: () => Promise<T> | T): Promise<T> => {
    const run = turn.then(fn, fn);
    turn = run.catch(() => {});
    return run;
  };

  const apply = (value: Uint8Array | undefined) => {
    const assignment = decodeAssignment(value, deps.log);
    if (!assignment) return;
    whole = assignment;
    anywhere = new Set(Object.keys(assignment).flatMap((id) => Object.keys(workersOf(assignment, id))));
    const mine = workersOf(assignment, deps.id);
    const text = JSON.stringify(Object.entries(mine).sort());
    if (text === last) return;
    last = text;
    deps.onChange(mine);
  };

  const reader = async () => (assignments ??= await openAssignmentReader(deps.nc));

  const poll = () =>
    inTurn(async () => {
      apply(await (await reader()).get());
    });

  const watchLoop = () =>
    followWatch({
      open: async () => (await reader()).watch(),
      onItem: (value) => inTurn(() => apply(value)),
      onError: (err) => deps.log.warn("assignment watch failed; watching again", { err }),
      onEnd: () => (assignments = undefined),
      signal: stopping.signal,
    });

  return {
    async start() {
      await poll().catch((err: unknown) => {
        assignments = undefined;
        throw err;
      });
      watching = watchLoop();
      pollTimer = setInterval(() => {
        poll().catch((err: unknown) => {
          assignments = undefined;
          deps.log.warn("reading the assignment failed", { err });
        });
      }, deps.pollMs);
    },
    assignedAnywhere: () => anywhere,
    assignment: () => whole,
    async stop() {
      stopping.abort();
      clearInterval(pollTimer);
      await watching;
      await turn;
    },
  };
}

/** An encoded assignment (none: empty); undefined if unreadable. */
function decodeAssignment(value: Uint8Array | undefined, log: Logger): WorkerAssignment | undefined {
  if (!value || value.length === 0) return {};
  try {
    const assignment = decode<WorkerAssignment>(value);
    return typeof assignment === "object" && assignment !== null ? assignment : {};
  } catch (err) {
    log.error("assignment is not msgpack; keeping the current workers", { err });
    return undefined;
  }
}

/** One provisioner's part of an assignment (positive integer counts only). */
function workersOf(assignment: WorkerAssignment, id: string): Record<string, number> {
  const entry = Object.hasOwn(assignment, id) ? assignment[id] : undefined;
  const mine: Record<string, number> = {};
  if (typeof entry !== "object" || entry === null) return mine;
  for (const [tenant, n] of Object.entries(entry)) {
    if (typeof n === "number" && Number.isFinite(n) && n >= 1) mine[tenant] = Math.floor(n);
  }
  return mine;
}
