import {
  createActor,
  type AnyActorScope,
  type AnyStateMachine,
  type EventObject,
  type StateValue,
} from "xstate";

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

interface InertScope {
  scope: AnyActorScope;
  /** Where the scope collects the actions of the transition running now (transitions are synchronous). */
  sink: Array<{ type: string; params?: unknown }>;
}

/**
 * xstate's pure `transition` and `initialTransition` build a fresh actor (running the machine's context factory without input) on
 * every call, which cost more than the transition itself. One inert scope per machine does the same job:
 * it executes nothing and only collects the actions.
 */
const scopes = new WeakMap<AnyStateMachine, InertScope>();

function inertScope(machine: AnyStateMachine): InertScope {
  let found = scopes.get(machine);
  if (!found) {
    const self = createActor(machine);
    const sink: InertScope["sink"] = [];
    const scope = {
      self,
      defer: () => {},
      id: "",
      logger: () => {},
      sessionId: "",
      stopChild: () => {},
      system: self.system,
      emit: () => {},
      actionExecutor: (action: { type: string; params?: unknown }) => {
        sink.push(action);
      },
    } as unknown as AnyActorScope;
    found = { scope, sink };
    scopes.set(machine, found);
  }
  return found;
}

const resolve = <C>(machine: AnyStateMachine, persisted: PersistedActor<C>) =>
  machine.resolveState({ value: persisted.value, context: persisted.context as never });

/** Starts an actor: its first persisted snapshot and the actions its start decides. Pure. */
export function startActor<C>(
  machine: AnyStateMachine,
  version: string,
  input: unknown,
): { persisted: PersistedActor<C>; actions: ActorAction[] } {
  const { scope, sink } = inertScope(machine);
  sink.length = 0;
  const s = machine.getInitialSnapshot(scope, input) as unknown as SnapshotLike<C>;
  const actions = actionsOf(sink);
  sink.length = 0;
  return { persisted: { machine: version, value: s.value, context: s.context }, actions };
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
  const { scope, sink } = inertScope(machine);
  for (const event of events) {
    sink.length = 0;
    const next = machine.transition(snapshot, event, scope);
    if (next.value !== snapshot.value || next.context !== snapshot.context) changed = true;
    actions.push(...actionsOf(sink));
    snapshot = next;
  }
  sink.length = 0;
  const s = snapshot as unknown as SnapshotLike<C>;
  return { persisted: { machine: persisted.machine, value: s.value, context: s.context }, actions, changed };
}

/** Whether the actor would react to the event (answer 409 before writing anything). */
export function accepts<C>(machine: AnyStateMachine, persisted: PersistedActor<C>, event: EventObject): boolean {
  return (resolve(machine, persisted) as unknown as SnapshotLike<C>).can(event);
}
