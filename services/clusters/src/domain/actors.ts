import {
  createActor,
  type AnyActorScope,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventObject,
  type StateValue,
} from "xstate";
import { CorralError } from "@corral/contracts";

/** What is stored for an actor: the machine version, the state and the context. Nothing else is state. */
export interface PersistedActor<C> {
  machine: string;
  value: StateValue;
  context: C;
}

/** An action a transition decided, as the machine names it; carried out after the new snapshot is stored. */
export interface ActorAction {
  type: string;
  params: Record<string, unknown>;
}

/**
 * The machines of one kind of actor, by the version stored with each snapshot: a new actor starts on `current`,
 * a stored one keeps running on the machine it was started with (restatedev/xstate `getLogic`).
 */
export interface MachineVersions {
  readonly kind: string;
  readonly current: string;
  /** The machine of a stored version; {@link UnknownMachineVersionError} when this process has none. */
  machineFor(version: string): AnyStateMachine;
}

/** A stored snapshot names a machine version this process does not have (written by a newer one, perhaps). */
export class UnknownMachineVersionError extends CorralError {
  constructor(kind: string, version: string, known: readonly string[]) {
    super(500, "unknown_machine_version", `no ${kind} machine of version ${version} (known: ${known.join(", ")})`, {
      kind,
      version,
    });
  }
}

export function machineVersions(kind: string, current: string, byVersion: Readonly<Record<string, AnyStateMachine>>): MachineVersions {
  if (!Object.hasOwn(byVersion, current)) throw new Error(`${kind} machine ${current} is not among its versions`);
  return {
    kind,
    current,
    machineFor(version) {
      const machine = Object.hasOwn(byVersion, version) ? byVersion[version] : undefined;
      if (!machine) throw new UnknownMachineVersionError(kind, version, Object.keys(byVersion));
      return machine;
    },
  };
}

function actionsOf(executable: ReadonlyArray<{ type: string; params?: unknown }>): ActorAction[] {
  return executable
    .filter((a) => !a.type.startsWith("xstate."))
    .map((a) => ({ type: a.type, params: (a.params ?? {}) as Record<string, unknown> }));
}

const persistedOf = <C>(version: string, snapshot: AnyMachineSnapshot): PersistedActor<C> => ({
  machine: version,
  value: snapshot.value,
  context: snapshot.context as C,
});

const resolve = <C>(machine: AnyStateMachine, persisted: PersistedActor<C>) =>
  machine.resolveState({ value: persisted.value, context: persisted.context as never });

/**
 * Starts an actor: its first persisted snapshot and the actions its start decides. What xstate's pure
 * `initialTransition` does, in the {@link ReusedScope} (`initialTransition` builds its scope with `createActor`, which
 * computes a whole initial snapshot first: two per start, a start per cluster create and per plan).
 */
export function startActor<C>(
  machine: AnyStateMachine,
  version: string,
  input: unknown,
): { persisted: PersistedActor<C>; actions: ActorAction[] } {
  const { scope, collected } = reusedScopeOf(machine);
  collected.length = 0;
  const snapshot = machine.getInitialSnapshot(scope, input);
  const actions = actionsOf(collected);
  collected.length = 0;
  return { persisted: persistedOf<C>(version, snapshot), actions };
}

/**
 * The actor scope `machine.transition` runs in: inert like the one xstate's pure `transition(logic, snapshot,
 * event)` builds (it executes nothing; actions are collected), but built once per machine instead of once per event.
 * xstate builds it with `createActor`, which computes a whole initial snapshot: that took about 110 us per event
 * against 25 us here, measured on the plan machine (every task result is one event, so the difference was about a
 * seventh of the clusters service's CPU per task). Fit for machines without invoked or spawned actors, as both
 * machines here are; transitions are synchronous, so one collecting array per machine serves every call.
 */
interface ReusedScope {
  scope: AnyActorScope;
  collected: Array<{ type: string; params?: unknown }>;
}

const reusedScopes = new WeakMap<AnyStateMachine, ReusedScope>();

function reusedScopeOf(machine: AnyStateMachine): ReusedScope {
  let found = reusedScopes.get(machine);
  if (!found) {
    const self = createActor(machine);
    const collected: ReusedScope["collected"] = [];
    const scope: AnyActorScope = {
      self,
      defer: () => {},
      id: "",
      logger: () => {},
      sessionId: "",
      stopChild: () => {},
      system: self.system,
      emit: () => {},
      actionExecutor: (action) => void collected.push(action),
    };
    found = { scope, collected };
    reusedScopes.set(machine, found);
  }
  return found;
}

/**
 * Applies events one after the other to a persisted actor (`machine.transition` in a {@link ReusedScope}). Returns
 * the next persisted form, every action decided (in order) and whether anything changed.
 */
export function applyEvents<C, E extends EventObject>(
  machine: AnyStateMachine,
  persisted: PersistedActor<C>,
  events: readonly E[],
): { persisted: PersistedActor<C>; actions: ActorAction[]; changed: boolean } {
  let snapshot: AnyMachineSnapshot = resolve(machine, persisted);
  const actions: ActorAction[] = [];
  let changed = false;
  const { scope, collected } = reusedScopeOf(machine);
  for (const event of events) {
    collected.length = 0;
    const next = machine.transition(snapshot, event, scope);
    if (next.value !== snapshot.value || next.context !== snapshot.context) changed = true;
    actions.push(...actionsOf(collected));
    snapshot = next;
  }
  collected.length = 0;
  return { persisted: persistedOf<C>(persisted.machine, snapshot), actions, changed };
}

/** Whether the actor would react to the event (answer 409 before writing anything). */
export function accepts<C>(machine: AnyStateMachine, persisted: PersistedActor<C>, event: EventObject): boolean {
  return resolve(machine, persisted).can(event);
}

/** What a step of a durable actor decided: the record to store and the actions to carry out once it is stored. */
export interface Decision<R, A> {
  record: R;
  actions: A[];
}

/** How each action type of a machine becomes its typed form, from the params the machine gave it. */
export type ActionDecoders<A extends { type: string }> = {
  [K in A["type"]]: (params: Record<string, unknown>) => Extract<A, { type: K }>;
};

/** The typed form of the actions a machine decided; an action type without a decoder is a bug of the machine. */
export function typedActions<A extends { type: string }>(kind: string, actions: readonly ActorAction[], decoders: ActionDecoders<A>): A[] {
  return actions.map((a) => {
    const decode = Object.hasOwn(decoders, a.type) ? (decoders as Record<string, (p: Record<string, unknown>) => A>)[a.type] : undefined;
    if (!decode) throw new Error(`the ${kind} machine decided an unknown action ${a.type}`);
    return decode(a.params);
  });
}
