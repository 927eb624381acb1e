import { initialTransition, transition, type AnyStateMachine, type EventObject, type StateValue } from "xstate";

/** What is stored for an actor: the machine version, the state and the context. Nothing else is state. */
export interface PersistedActor<C> {
  machine: string;
  value: StateValue;
  context: C;
}

/** An action the engine must carry out after the new snapshot is stored. */
export interface ActorAction {
  type: string;
  params: Record<string, unknown>;
}

interface SnapshotLike<C> {
  value: StateValue;
  context: C;
  can(event: EventObject): boolean;
}

function actionsOf(executable: ReadonlyArray<{ type: string; params?: unknown }>): ActorAction[] {
  return executable
    .filter((a) => !a.type.startsWith("xstate."))
    .map((a) => ({ type: a.type, params: (a.params ?? {}) as Record<string, unknown> }));
}

const resolve = <C>(machine: AnyStateMachine, persisted: PersistedActor<C>) =>
  machine.resolveState({ value: persisted.value, context: persisted.context as never });

/** Starts an actor: its first persisted snapshot and the actions its start decides. Pure. */
export function startActor<C>(
  machine: AnyStateMachine,
  version: string,
  input: unknown,
): { persisted: PersistedActor<C>; actions: ActorAction[] } {
  const [snapshot, actions] = initialTransition(machine, input as never);
  const s = snapshot as unknown as SnapshotLike<C>;
  return { persisted: { machine: version, value: s.value, context: s.context }, actions: actionsOf(actions) };
}

/**
 * Applies events one after the other to a persisted actor with xstate's pure `transition`. Returns the next
 * persisted form, every action decided (in order) and whether anything changed.
 */
export function applyEvents<C, E extends EventObject>(
  machine: AnyStateMachine,
  persisted: PersistedActor<C>,
  events: readonly E[],
): { persisted: PersistedActor<C>; actions: ActorAction[]; changed: boolean } {
  let snapshot = resolve(machine, persisted);
  const actions: ActorAction[] = [];
  let changed = false;
  for (const event of events) {
    const [next, executable] = transition(machine, snapshot, event);
    if (next.value !== snapshot.value || next.context !== snapshot.context) changed = true;
    actions.push(...actionsOf(executable));
    snapshot = next;
  }
  const s = snapshot as unknown as SnapshotLike<C>;
  return { persisted: { machine: persisted.machine, value: s.value, context: s.context }, actions, changed };
}

/** Whether the actor would react to the event (answer 409 before writing anything). */
export function accepts<C>(machine: AnyStateMachine, persisted: PersistedActor<C>, event: EventObject): boolean {
  return (resolve(machine, persisted) as unknown as SnapshotLike<C>).can(event);
}
