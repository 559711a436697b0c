// State machines are data (STYLE): each object with a status has one table of the moves it may make,
// and every status write goes through it. A store that writes a status takes a Transition (only this
// module makes one, and only for a move the table lists) or an initial status the table allows.

/** A status move the table does not list: a bug in the caller, never the user's input (a 500, not a 4xx). */
export class IllegalTransitionError extends Error {
  constructor(machine: string, from: string, to: string) {
    super(`illegal ${machine} transition ${from} -> ${to}`);
  }
}

/** What IllegalTransitionError names as the "from" of an insert in a status the table does not allow. */
export const NEW_ROW = '(new)';

/** Each status, with the statuses it may move to. A status moving to itself is a write the table must list too. */
export type Transitions<S extends string> = { readonly [From in S]: readonly S[] };

/** Proof that the table allowed from -> to; stores refuse a status that does not come with one. */
export interface Transition<S extends string> {
  readonly machine: string;
  readonly from: S;
  readonly to: S;
}

export interface StateMachine<S extends string> {
  readonly name: string;
  readonly statuses: readonly S[];
  /** The statuses a new row may be inserted with. */
  readonly initial: readonly S[];
  readonly transitions: Transitions<S>;
  /** The statuses with no way out. */
  readonly final: readonly S[];
  canTransition(from: S, to: S): boolean;
  /** The move from -> to, or IllegalTransitionError when the table does not list it. */
  transition(from: S, to: S): Transition<S>;
  /** The status, when a new row may have it; IllegalTransitionError otherwise. */
  initialStatus(status: S): S;
  /** A Transition this machine issued, else IllegalTransitionError (a status that skipped the table). */
  check(transition: Transition<S>): Transition<S>;
  /** The statuses that may move to `to` (for the WHERE of a statement that moves many rows). */
  fromStatusesTo(to: S): readonly S[];
}

// Transitions are registered here when issued, so a hand-made object with the same fields is refused.
const issued = new WeakSet<object>();

// Statuses are interpolated into SQL as literals (sqlList): only plain lower-case words.
const STATUS_PATTERN = /^[a-z][a-z_]*$/;

export function defineStateMachine<S extends string>(spec: {
  name: string;
  statuses: readonly S[];
  initial: readonly S[];
  transitions: Transitions<S>;
}): StateMachine<S> {
  const { name, statuses, initial, transitions } = spec;
  for (const status of statuses) {
    if (!STATUS_PATTERN.test(status))
      throw new Error(`assertion failed: ${name} status ${JSON.stringify(status)} is not a plain word`);
  }
  const known = new Set<string>(statuses);
  if (
    known.size !== statuses.length ||
    Object.keys(transitions).length !== statuses.length ||
    Object.keys(transitions).some((from) => !known.has(from))
  ) {
    throw new Error(`assertion failed: the ${name} table must list each of its statuses once`);
  }
  for (const status of [...initial, ...Object.values<readonly S[]>(transitions).flat()]) {
    if (!known.has(status)) throw new Error(`assertion failed: ${name} status ${status} is not one of its statuses`);
  }
  const canTransition = (from: S, to: S): boolean => transitions[from]?.includes(to) ?? false;
  const fromStatuses = new Map<S, readonly S[]>(
    statuses.map((to) => [to, Object.freeze(statuses.filter((from) => canTransition(from, to)))]),
  );
  return Object.freeze({
    name,
    statuses,
    initial,
    transitions,
    final: Object.freeze(statuses.filter((status) => transitions[status].length === 0)),
    canTransition,
    transition(from: S, to: S): Transition<S> {
      if (!canTransition(from, to)) throw new IllegalTransitionError(name, from, to);
      const made = Object.freeze({ machine: name, from, to });
      issued.add(made);
      return made;
    },
    initialStatus(status: S): S {
      if (!initial.includes(status)) throw new IllegalTransitionError(name, NEW_ROW, status);
      return status;
    },
    check(transition: Transition<S>): Transition<S> {
      if (!issued.has(transition) || transition.machine !== name)
        throw new IllegalTransitionError(name, String(transition?.from), String(transition?.to));
      return transition;
    },
    fromStatusesTo: (to: S): readonly S[] => fromStatuses.get(to) ?? [],
  });
}

/** Statuses as a SQL list of literals (`'open', 'pending'`): the same text, so the same plans and partial indexes, as writing them by hand. */
export const sqlList = (statuses: readonly string[]): string => {
  if (statuses.length === 0 || statuses.some((status) => !STATUS_PATTERN.test(status)))
    throw new Error(`assertion failed: bad status list ${JSON.stringify(statuses)}`);
  return statuses.map((status) => `'${status}'`).join(', ');
};
