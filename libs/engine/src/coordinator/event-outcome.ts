import type { RunState, Transaction } from '@weft/persistence';
import type { RunFinishedNote, RunStartedNote } from './coordinator-options.js';
import type { FireTimerInput } from './inputs.js';
import type { MachineError, NodeState, RunChange, RunEvent, RunStatus, TakenTask, TaskJob, Transition, WorkflowDag } from '../index.js';

/** What the observer is told after commit of a run this event started (the tenant and run are the event's). */
export type StartedNote = Omit<RunStartedNote, 'tenantId' | 'runId'>;

/** What the observer is told after commit of a run this event finished (the tenant and run are the event's). */
export type FinishedNote = Omit<RunFinishedNote, 'tenantId' | 'runId'>;

/** What every committed event leaves, whatever became of it: the run's row after it and the event's clock. */
interface Committed {
  /** The run's status after the event. */
  status: RunStatus;
  /** The run's event_seq after the event (0 for a run created QUEUED, which applied none). */
  seq: number;
  /** The event's clock reading (database time unless a test clock is injected). */
  now: Date;
}

/**
 * What an event did to other runs of its tenant in the same transaction, for after-commit work:
 * the runs linked to it (children started or cancelled, parents woken) and the queued runs of a
 * concurrency key it started. Its linked events take its clock reading `now`.
 */
export interface LinkedWork {
  /** The event's clock reading. */
  now: Date;
  /** Events applied to other runs in the same transaction: their jobs and updates go out after commit like this one's. */
  nested: RunOutcome[];
  /** Parent SUBWORKFLOW tasks woken because this run (or a nested one) ended: fired after commit. */
  wakes: FireTimerInput[];
}

/** The outcome of an event of run `runId` (another run than the event that caused it, or a run a schedule's pass started). */
export interface RunOutcome {
  runId: string;
  outcome: EventOutcome;
}

/** The machine applied the event: its transition's actions are written, with the history row. */
export interface AppliedOutcome extends Committed, LinkedWork {
  kind: 'applied';
  /** What the machine decided (its `ignored` says why a report changed nothing). */
  transition: Transition;
  /** The attempts the event dispatched, for fair dispatch after commit. */
  jobs: TaskJob[];
  /** The attempt the reporting worker took for itself (eager dispatch); not in `jobs`. */
  taken?: TakenTask;
  /** The run's node states after the event (as committed), kept by the snapshot cache for the run's next event. */
  nodes: Map<string, NodeState>;
  /**
   * What the event changed in the run's rows, built on demand (after commit, for a watched run
   * only); undefined when it is too big to carry.
   */
  change: () => RunChange | undefined;
  /** Set when this event started the run (its RunStarted applied). */
  started?: StartedNote;
  /** Set when this event finished the run. */
  finished?: FinishedNote;
  /** The queue of a reported task that held a node's concurrency slot: its queue's backlog may go on. */
  slotFreedOn?: string;
  /** Set when this event paused the run: its workflow and who paused it. */
  paused?: { workflowId: string; cause: string };
  /** The queues whose backlog rows this event's resume released. */
  released?: string[];
}

/**
 * The machine rejected a worker's, the scheduler's or a linked run's event: nothing but its
 * history row (with the error) is written.
 */
export interface RejectedOutcome extends Committed {
  kind: 'rejected';
  error: MachineError;
  /** See {@link AppliedOutcome.slotFreedOn}. */
  slotFreedOn?: string;
}

/** The coordinator ignored a report without asking the machine (a stale lease token): only its history row is written. */
export interface IgnoredOutcome extends Committed {
  kind: 'ignored';
  /** Why, as the history row records it (`stale lease: …`). */
  reason: string;
}

/**
 * Rows the coordinator wrote itself, without the machine: a run created QUEUED for a slot of its
 * concurrency key, a child run failed because the machine rejected its start, the waiting task
 * and run failed because the database refused a timer's event. Watchers read the run again.
 */
export interface DirectOutcome extends Committed, LinkedWork {
  kind: 'direct';
  /** Set when the run counts as started (a child run that failed at its start). */
  started?: StartedNote;
  /** Set when the coordinator finished the run. */
  finished?: FinishedNote;
}

/** What became of one committed event: the after-commit work and the caller's answer follow from its `kind`. */
export type EventOutcome = AppliedOutcome | RejectedOutcome | IgnoredOutcome | DirectOutcome;

/** One event on a run row that transaction `m` holds locked (or just inserted). */
export interface LockedEvent {
  m: Transaction;
  tenantId: string;
  run: RunState;
  /** The run's node states before the event; the machine updates them in place. */
  nodes: Map<string, NodeState>;
  /** The definition of the version the event is decided on. */
  dag: WorkflowDag;
  ev: RunEvent;
  /** The event's clock reading. */
  now: Date;
  /** How deep in child-run starts this event is, within one transaction (0, the default: the event itself). */
  nesting?: number;
  /** Eager dispatch: the reporting worker's queue. */
  takeFrom?: string;
}

/**
 * Applies one event to a locked run: the machine, its actions' rows, the history row and the
 * effects on linked runs, all in the event's transaction. What the event pipeline, run starts,
 * child runs and run slots apply their events through.
 */
export interface LockedRunEvents {
  /**
   * A user's command or a run's start: a machine rejection is thrown (MachineError) and rolls
   * back with the transaction, so it writes nothing.
   */
  applyCommand(e: LockedEvent): Promise<AppliedOutcome>;
  /** A worker's, the scheduler's or a linked run's event: a machine rejection is recorded in the history and returned. */
  applyReport(e: LockedEvent): Promise<AppliedOutcome | RejectedOutcome>;
}
