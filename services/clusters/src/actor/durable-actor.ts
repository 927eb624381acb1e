import type { AnyStateMachine, EventObject } from "xstate";
import type { Modification, Versioned } from "@corral/shared";
import { startActor, type ActorAction, type Decision, type MachineVersions, type PersistedActor } from "../domain/actors.js";

/** Where a kind of actor is stored: compare-and-set writes that retry from a fresh read (shared/src/kv.ts). */
export interface ActorStore<Ref, R> {
  modify(ref: Ref, fn: (current: Versioned<R> | undefined) => Modification<R>): Promise<R | undefined>;
}

/** One kind of actor (cluster, plan): its machines by version and its pure steps (domain/*-steps.ts). */
export interface ActorKind<R, E extends EventObject, A, C> {
  machines: MachineVersions;
  actorOf(record: R): PersistedActor<C>;
  /** The record after `events` on `machine`, or undefined when nothing changes; throws to refuse. Pure. */
  step(record: R, machine: AnyStateMachine, events: readonly E[]): Decision<R, A> | undefined;
  /** The typed form of the actions a machine decided. */
  actionsOf(actions: readonly ActorAction[]): A[];
}

/** What a send stored: the record before and after, and what is to be carried out now that it is stored. */
export interface Sent<R, A> extends Decision<R, A> {
  previous: R;
}

/** Observes each write of an actor before its actions are carried out (tests stop a process right there). */
export type AfterWriteHook = (kind: string, record: unknown, actions: readonly unknown[]) => void | Promise<void>;

/** A kind of actor made durable: every change of one of its records goes through `send`. */
export interface DurableActor<Ref, R, E, A, C> {
  /**
   * Starts a new actor on the current machine version (xstate's `initialTransition` with `input`), stores the
   * record `build` makes of its first snapshot with `write` (false: the id is taken) and answers it with the
   * actions its start decided; `undefined` when the id was taken.
   */
  create(input: unknown, build: (actor: PersistedActor<C>) => R, write: (record: R) => Promise<boolean>): Promise<Decision<R, A> | undefined>;
  /**
   * Reads the actor with its revision, runs the machine of its stored version over `events` (pure), writes the
   * result with compare-and-set (deciding again from a fresh read when another write came first) and answers
   * what was written with the actions to carry out. `undefined`: no such actor, or nothing changed.
   */
  send(ref: Ref, events: readonly E[]): Promise<Sent<R, A> | undefined>;
}

export function createDurableActor<Ref, R, E extends EventObject, A, C>(
  kind: ActorKind<R, E, A, C>,
  store: ActorStore<Ref, R>,
  afterWrite?: AfterWriteHook,
): DurableActor<Ref, R, E, A, C> {
  const { machines } = kind;
  return {
    async create(input, build, write) {
      const started = startActor<C>(machines.machineFor(machines.current), machines.current, input);
      const created = { record: build(started.persisted), actions: kind.actionsOf(started.actions) };
      if (!(await write(created.record))) return undefined;
      await afterWrite?.(machines.kind, created.record, created.actions);
      return created;
    },

    async send(ref, events) {
      let sent: Sent<R, A> | undefined;
      // `modify` may run more than once (a lost compare-and-set): only the decision of its last run was written.
      await store.modify(ref, (current) => {
        sent = undefined;
        if (!current) return { keep: true };
        const machine = machines.machineFor(kind.actorOf(current.value).machine);
        const decided = kind.step(current.value, machine, events);
        if (!decided) return { keep: true };
        sent = { ...decided, previous: current.value };
        return { put: decided.record };
      });
      if (sent) await afterWrite?.(machines.kind, sent.record, sent.actions);
      return sent;
    },
  };
}
