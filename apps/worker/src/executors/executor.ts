import type { NonRetryableStatus } from '@weft/engine';
import type { AttemptLog } from './attempt-log.js';

/**
 * What a worker hands an executor and what it gets back. An executor turns a task's
 * resolved input (the node's `spec` after template resolution) into the task's output;
 * it never touches the database.
 */

/** The output of a successful execution: any JSON value. */
export interface ExecutionResult {
  output: unknown;
}

/**
 * A failed execution. `retryable` (default true) fails only this attempt, so the node's
 * retry policy applies; `retryable: false` is for a spec that can never work (a missing
 * url, an unsupported runtime, code without a handler, a refused address) and fails the
 * task for good.
 */
export class ExecutionError extends Error {
  constructor(
    message: string,
    readonly retryable = true,
    /** What kind of failure it is, for metrics (`weft_task_failures_total{error_class}`). */
    readonly kind: FailureKind = retryable ? 'error' : 'invalid_spec',
  ) {
    super(message);
    this.name = 'ExecutionError';
  }
}

/**
 * The classes of failed attempts: `timeout`, `cancelled`, `http_status` (an answer outside
 * `accept`), `connection` (no answer: refused, reset, DNS), `refused_address` (the address guard),
 * `output_too_large`, `code_exception` (the tenant's code raised or crashed), `invalid_spec` (a
 * spec that can never work), `unavailable` (this worker cannot run the node), `reserved_queue` (the
 * task's queue is reserved for other tenants: refused at the claim, never executed), `error` (any other
 * execution failure); `internal` is a worker's own error (not an ExecutionError).
 */
export type FailureKind =
  | 'timeout'
  | 'cancelled'
  | 'http_status'
  | 'connection'
  | 'refused_address'
  | 'output_too_large'
  | 'code_exception'
  | 'invalid_spec'
  | 'unavailable'
  | 'reserved_queue'
  | 'error'
  | 'internal';

/** The class of a failed attempt's error, see {@link FailureKind}. */
export function failureKind(err: unknown): FailureKind {
  return err instanceof ExecutionError ? err.kind : 'internal';
}

/** Where an execution runs: the task and attempt (1-based), the node's runtime, and a cancel signal. */
export interface ExecutionContext {
  taskId: string;
  nodeId: string;
  attempt: number;
  runtime?: string;
  signal?: AbortSignal;
  /**
   * The node is `sensitive: true`: error messages must not quote what the tenant resolved (urls,
   * headers, bodies, input values). The worker also redacts every input value from the message.
   */
  sensitive?: boolean;
  /** The W3C `traceparent` an HTTP request of this execution carries (the attempt's span, or the run's). */
  traceparent?: string;
  /** Where the execution records what it printed or did (the attempt's logs); none: nothing is kept. */
  log?: AttemptLog;
  /** HTTP: the node's `retry.non_retryable`; a status it matches fails the attempt with `retryable: false`. */
  nonRetryable?: readonly NonRetryableStatus[];
}

/**
 * Executes one task attempt. Resolves with the output (a JSON value); rejects with an
 * `ExecutionError` (any other error is to be treated as retryable by the caller).
 */
export interface TaskExecutor {
  execute(input: unknown, ctx: ExecutionContext): Promise<unknown>;
}
