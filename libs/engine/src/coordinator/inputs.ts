import type { JsonValue, RunLabels, TakenTask } from '../index.js';

/** Input of a run's start. */
export interface StartRunInput {
  workflowId: string;
  /** Default: the workflow's pinned default version, else the latest. */
  version?: number;
  input?: JsonValue;
  config?: JsonValue;
  /** Overrides the definition's entry node. */
  startNodeId?: string;
  /** A second start with the same key (per tenant) returns the first run. */
  idempotencyKey?: string;
  /** The caller's W3C `traceparent`: the run's trace continues it (ignored when malformed). */
  traceparent?: string;
  /** Dispatch priority of the run's tasks within the tenant, 1 (first) to 5; default the definition's, else 3. */
  priority?: number;
  /** The run's labels (see `checkLabels` for their limits); default none. */
  labels?: RunLabels;
}

/** The priority of a run whose start and definition name none. */
export const DEFAULT_RUN_PRIORITY = 3;

/** A worker's successful report of one task attempt. */
export interface ReportCompletedInput {
  runId: string;
  taskId: string;
  nodeId: string;
  attempt: number;
  output: JsonValue;
  /**
   * The lease token the worker's claim returned to this execution. A report whose token is not
   * the task's current one (the attempt was re-dispatched and claimed again) is ignored. Without
   * a token the report is fenced by `attempt` only (tools, tests).
   */
  leaseToken?: string;
  /**
   * Eager dispatch: the queue of the reporting worker, which will execute at once the first
   * attempt this report dispatches on that queue that is due now, instead of it going through
   * Bull. That attempt comes back as {@link ReportResult.taken}, already RUNNING under its own
   * lease token.
   */
  takeFrom?: string;
  /** What the attempt printed or did, kept per attempt; absent or empty: nothing is written. */
  log?: AttemptLogInput;
}

/**
 * One attempt's logs as a worker reports them: the text it kept (at most 64 KiB of output, its
 * tail after a marker line of what was cut; a sensitive node's resolved values already
 * redacted), and the worker's clock when the execution began and ended.
 */
export interface AttemptLogInput {
  text: string;
  startedAt: Date;
  finishedAt: Date;
}

/** A worker's failed report of one task attempt; `retryable: false` asks to fail for good. */
export interface ReportFailedInput {
  runId: string;
  taskId: string;
  nodeId: string;
  attempt: number;
  error: string;
  retryable?: boolean;
  /** See {@link ReportCompletedInput.leaseToken}. */
  leaseToken?: string;
  /** See {@link ReportCompletedInput.takeFrom}. */
  takeFrom?: string;
  /** See {@link ReportCompletedInput.log}. */
  log?: AttemptLogInput;
}

/** A lease a worker holds: the attempt it executes and the token its claim returned. */
export interface HeldLease {
  tenantId: string;
  taskId: string;
  attempt: number;
  leaseToken: string;
}

/** Input of a signal sent to a run. */
export interface SendSignalInput {
  runId: string;
  name: string;
  payload?: JsonValue;
}

/** Input of a run's cancellation. */
export interface CancelRunInput {
  runId: string;
  reason?: string;
  /** The bulk action this comes from: kept with the event in the run's history. */
  batchId?: string;
}

/** Input of a run's pause or resume; `reason` is kept in the run's history (and, for a pause, as its pause reason). */
export interface PauseRunInput {
  runId: string;
  reason?: string;
  /** The bulk action this comes from: kept with the event in the run's history. */
  batchId?: string;
}

/** Input of a run's retry; `version` defaults to the run's current version. */
export interface RetryRunInput {
  runId: string;
  fromNodeId: string;
  version?: number;
  input?: JsonValue;
  config?: JsonValue;
  /** Re-run only the failed, skipped and cancelled iterations of `fromNodeId`, a `for_each` node (see RunRetried). */
  failedIterationsOnly?: boolean;
  /** The bulk action this comes from: kept with the event in the run's history. */
  batchId?: string;
}

/** Outcome of a worker/scheduler report: `ignored` says why it changed nothing. */
export interface ReportResult {
  ignored?: string;
  /** The attempt the reporting worker took (see {@link ReportCompletedInput.takeFrom}). */
  taken?: TakenTask;
}

/** A timer to fire for a WAITING task: its run, task and node. */
export interface FireTimerInput {
  runId: string;
  taskId: string;
  nodeId: string;
}
