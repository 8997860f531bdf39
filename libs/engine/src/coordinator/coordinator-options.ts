import type { RunStatus, TemplateResolver } from '../index.js';

/** Where the coordinator reports what it could not do after commit (enqueue, publish). */
export interface CoordinatorLogger {
  warn(message: string): void;
  error(message: string): void;
}

/** A run created and started (a child run too), told after its commit. */
export interface RunStartedNote {
  tenantId: string;
  runId: string;
  workflowId: string;
  version: number;
  /** The parent run of a child run (SUBWORKFLOW); null for a run started through the API. */
  parentRunId: string | null;
}

/** A run that reached SUCCEEDED, FAILED, CANCELLED or TIMED_OUT, told after the commit of its last event. */
export interface RunFinishedNote {
  tenantId: string;
  runId: string;
  workflowId: string;
  status: RunStatus;
  /** From the run's creation to its end, in milliseconds of the event clock. */
  durationMs: number;
  /** Nodes whose task ended FAILED, in definition order of their tasks (empty when none). */
  failedNodes: string[];
  reason?: string;
  /** When the run was created and when it finished (the event clock). */
  createdAt: Date;
  finishedAt: Date;
  /** The run's span (`traceparent` form) and its parent span id, when the run has a trace. */
  traceparent?: string;
  traceCallerSpan?: string;
}

/** A worker attempt whose lease expired with its job gone, put back on its queue by the lease sweep. */
export interface LeaseRecoveredNote {
  tenantId: string;
  runId: string;
  taskId: string;
  nodeId: string;
  /** 0-based, as in the task row. */
  attempt: number;
  queue: string;
  /** The task's status when its lease was found expired (PENDING, QUEUED or RUNNING). */
  status: string;
}

/** A due timer the scheduler fired (a WAIT wake-up, a timeout, a retry's or a child's wake-up). */
export interface TimerFiredNote {
  tenantId: string;
  runId: string;
  taskId: string;
  nodeId: string;
  /** How long after its due time the scheduler claimed it, in milliseconds of the database's clock. */
  lateMs: number;
}

/** A run a schedule started, told after its commit. */
export interface ScheduleFiredNote {
  tenantId: string;
  scheduleId: string;
  runId: string;
  /** `clock`, `buffer` (kept while a run was active), `backfill` or `trigger`. */
  source: string;
  nominalTime: Date;
  /** From the nominal time to the start, in milliseconds of the event clock (0 when started early). */
  lagMs: number;
}

/** Nominal times of a schedule that started no run, told after their commit. */
export interface ScheduleSkippedNote {
  tenantId: string;
  scheduleId: string;
  /** A SkipReason: `overlap`, `missed`, `buffer_full`, `start_failed`, `already_fired`. */
  reason: string;
  count: number;
}

/**
 * What the coordinator tells as it goes, for metrics and logs (implemented in @weft/platform).
 * Called after the commit of what it tells, synchronously; an observer that throws is logged
 * and ignored, never undoing or failing the event.
 */
export interface CoordinatorObserver {
  runStarted(note: RunStartedNote): void;
  runFinished(note: RunFinishedNote): void;
  leaseRecovered(note: LeaseRecoveredNote): void;
  timerFired(note: TimerFiredNote): void;
  scheduleFired(note: ScheduleFiredNote): void;
  scheduleSkipped(note: ScheduleSkippedNote): void;
  /** Flow control held a run (QUEUED for a slot of its key) or a task attempt (a node's limit). */
  flowHeld?(note: FlowHeldNote): void;
  /** Fair dispatch admitted attempts of `queue`, or a held run started: how long each waited and why. */
  flowDispatched?(note: FlowDispatchedNote): void;
  /** A run cancelled by its concurrency key's strategy (the new one, or the oldest). */
  concurrencyCancelled?(note: ConcurrencyCancelledNote): void;
  /** Run retention deleted expired run trees of a tenant (one batch, after its commit). */
  runsDeleted?(note: RunsDeletedNote): void;
  /** A run was paused (after its commit). */
  runPaused?(note: RunPausedNote): void;
  /** A bulk action acted on one of its runs (after the outcome was recorded). */
  batchItem?(note: BatchItemNote): void;
}

/** What came of one run of a bulk action. */
export interface BatchItemNote {
  tenantId: string;
  batchId: string;
  action: string;
  /** APPLIED, SKIPPED or FAILED. */
  outcome: string;
}

/** A run that was paused, and by whom. */
export interface RunPausedNote {
  tenantId: string;
  runId: string;
  workflowId: string;
  /** `operator`, `parent` (its parent run was paused) or `exhausted` (a node with `on_exhausted: pause` ran out of attempts). */
  cause: string;
}

/** Run trees run retention deleted in one batch of one tenant. */
export interface RunsDeletedNote {
  tenantId: string;
  /** Top-level runs deleted, each with its whole tree. */
  roots: number;
  /** Runs deleted, roots and their descendants together. */
  runs: number;
}

/** Why flow control holds a run or a task attempt. */
export type FlowHoldReason = 'CONCURRENCY_LIMIT' | 'RATE_LIMIT' | 'QUEUE_BACKLOG';

/** Runs or attempts held for `reason`, `count` of them. */
export interface FlowHeldNote {
  reason: FlowHoldReason;
  count: number;
}

/** Runs started from QUEUED (`queue` null) or attempts admitted on `queue`, each with its wait. */
export interface FlowDispatchedNote {
  queue: string | null;
  waits: Array<{ reason: FlowHoldReason; seconds: number }>;
}

/** A run a concurrency strategy cancelled. */
export interface ConcurrencyCancelledNote {
  tenantId: string;
  runId: string;
  strategy: 'cancel_newest' | 'cancel_oldest';
}

/** Options of the coordinator; every field has a default. */
export interface RunCoordinatorOptions {
  /**
   * A clock to use instead of the database's, for tests (a fake clock). By default every time the
   * coordinator computes with — the machine's now (WAIT wake-ups, retry `not_before`, timeouts,
   * `system.now`), the timestamps it writes, lease expiries and the scheduler's "due" comparisons
   * — is PostgreSQL's: `clock_timestamp()` read in the event's transaction after the run lock, and
   * `now()` inside the claim functions. The process clock is never used, so a worker or
   * scheduler whose clock is off cannot make a timer fire early or a lease expire.
   */
  now?: () => Date;
  /** Id generator for runs, tasks and signals (default UUIDv7, time-ordered). */
  newId?: () => string;
  logger?: CoordinatorLogger;
  /** Told of runs started and finished, leases recovered and timers fired (default: nobody). */
  observer?: CoordinatorObserver;
  /** Retries of an event after a transient failure before TRANSIENT is thrown (default 5). */
  maxEventRetries?: number;
  /** Template resolver for the machine (default a CEL resolver). */
  templates?: TemplateResolver;
  /** DAG cache size in workflow versions (default 512). */
  dagCacheSize?: number;
  /**
   * How long a claimed timer is hidden from other schedulers before it may fire again, ms
   * (default 10 000): how late a timer fires when the scheduler that claimed it dies before
   * applying it (applying takes milliseconds; one fired twice is ignored by fencing).
   */
  timerLeaseMs?: number;
  /** The most runs a bulk action acts on per second (`WEFT_BATCH_RUNS_PER_SECOND`, default 100). */
  batchRunsPerSecond?: number;
  /**
   * How late the scheduler may reach a schedule's due time in its normal course, ms (default
   * 10 000; the platform gives `scheduleGraceMs` of its poll interval): no catch-up window is
   * narrower, so a time reached within it fires even with `catchUpSeconds: 0`.
   */
  scheduleGraceMs?: number;
  /**
   * The lease of a worker attempt fair dispatch admitted, ms after its admission (default 30 000):
   * past it, an attempt no worker claimed whose job is not live goes back to the backlog through
   * the lost-task sweep. Also how far the sweep pushes a lease it found live.
   */
  dispatchLeaseMs?: number;
  /**
   * The least number of admitted jobs a queue may hold waiting for a worker (default 8). The window
   * is the live workers' slots on the queue when they are more; the rest of the backlog waits in
   * the database, in fair order.
   */
  dispatchWindowFloor?: number;
  /**
   * The lease a worker's claim and each of its heartbeats give, ms after the database's now
   * (default 15 000). A worker heartbeats every third of it.
   */
  runLeaseMs?: number;
  /**
   * Largest task output a worker may report, in bytes of its JSON text (default 1 MiB); a larger
   * one fails the attempt (`OUTPUT_TOO_LARGE`).
   */
  maxOutputBytes?: number;
  /** Largest signal payload, run input or run config, in bytes of its JSON text (default 1 MiB). */
  maxInputBytes?: number;
  /** The deepest chain of SUBWORKFLOW child runs (default 10): a run at this depth cannot start a child. */
  maxSubworkflowDepth?: number;
  /** The most runs one tree of child runs may hold (default 1,000). */
  maxRunTree?: number;
  /** Unconsumed signals one run may buffer (default 1,000); one more is refused with CONFLICT. */
  maxBufferedSignals?: number;
  /** Bytes of payload (stored JSON text) one run's unconsumed signals may hold (default 16 MiB). */
  maxBufferedSignalBytes?: number;
  /**
   * Fenced steps (default true): a worker's report on a run whose previous event this process
   * applied is decided from memory and written by one fenced statement through the process's
   * step committer, with other reports in one commit, instead of locking the run first. False
   * sends every report down the locking path.
   */
  fencedSteps?: boolean;
}
