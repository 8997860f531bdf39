import type { RunState, Transaction } from '@weft/persistence';
import type { RunFinishedNote, RunStartedNote } from './coordinator-options.js';
import type { MachineError, NodeState, RunChange, RunEvent, RunStatus, TakenTask, TaskJob, Transition, WorkflowDag } from '../index.js';

/** A timer to fire for a WAITING task: its run, task and node. */
export interface FireTimerInput {
  runId: string;
  taskId: string;
  nodeId: string;
}

/** What one committed event leaves for after-commit work and for the caller. */
export interface Applied {
  transition?: Transition;
  rejected?: MachineError;
  /** Set when the coordinator itself ignored the event (a report with a stale lease token). */
  ignored?: string;
  status: RunStatus;
  seq: number;
  jobs: TaskJob[];
  /** The event's clock reading (database time unless a test clock is injected). */
  now: Date;
  /**
   * Events applied to other runs in the same transaction: child runs started (StartChildRun) or
   * cancelled with their parent. Their jobs and updates go out after commit like this one's.
   */
  nested?: Array<{ runId: string; applied: Applied }>;
  /** Parent SUBWORKFLOW tasks woken because this run (or a nested one) ended: fired after commit. */
  wakes?: FireTimerInput[];
  /** The queue of a reported task that held a node's concurrency slot: its queue's backlog may go on. */
  slotFreedOn?: string;
  /** The attempt the reporting worker took for itself (eager dispatch); not in `jobs`. */
  taken?: TakenTask;
  /**
   * The run's node states after the event (as committed), kept by the snapshot cache for the
   * run's next event; absent when the event was not applied through the machine (or rejected).
   */
  nodes?: Map<string, NodeState>;
  /** Set when this event started the run (its RunStarted applied): told to the observer after commit. */
  started?: Omit<RunStartedNote, 'tenantId' | 'runId'>;
  /** Set when this event finished the run: told to the observer after commit. */
  finished?: Omit<RunFinishedNote, 'tenantId' | 'runId'>;
  /**
   * What the event changed in the run's rows, built on demand (after commit, for a watched run
   * only); undefined when it is too big to carry. Absent for an event applied outside the machine
   * (a stale report, a rejection, a refused timer): watchers then read the run again.
   */
  change?: () => RunChange | undefined;
}

/** How an event is applied on a locked run (see the event pipeline). */
export interface ApplyOptions {
  /** True for user commands: a machine rejection rolls back and is thrown; false records it in the history. */
  rejectedRollsBack: boolean;
  /** How deep in child-run starts this event is, within one transaction (0: the event itself). */
  nesting?: number;
  /** Eager dispatch: the reporting worker's queue. */
  takeFrom?: string;
}

/**
 * Applies `ev` to run `run` (locked by transaction `m`, or just inserted) with node states
 * `nodes` and definition `dag` at clock reading `now`: the machine, its actions' rows, the
 * history row and the effects on linked runs, all in `m`.
 */
export type ApplyLocked = (
  m: Transaction,
  tenantId: string,
  run: RunState,
  nodes: Map<string, NodeState>,
  dag: WorkflowDag,
  ev: RunEvent,
  now: Date,
  opts: ApplyOptions,
) => Promise<Applied>;
