import { isSensitive } from './model/payload-hygiene.js';
import { nonRetryableOf, type NonRetryableStatus } from './model/retry-policy.js';
import type { WorkflowNode } from './model/workflow-definition.js';
import type { JsonValue, RunStatus } from './model/workflow-types.js';

/**
 * What a worker receives for one task attempt: a Bull job whose id is `${taskId}:${attempt}`
 * on the queue `queue`. `input` is the node's resolved spec; the worker never sees a
 * template.
 */
export interface TaskJob {
  tenantId: string;
  runId: string;
  taskId: string;
  nodeId: string;
  nodeType: string;
  /** CODE runtime (`python` | `js`), if any. */
  runtime?: string;
  attempt: number;
  queue: string;
  input: JsonValue;
  /** Earliest start, epoch milliseconds on the database's clock (retry backoff). */
  notBefore: number;
  /**
   * True when the node is `sensitive: true` (payload hygiene): the worker keeps the
   * resolved input out of the attempt's error and its logs. Absent for other nodes.
   */
  sensitive?: boolean;
  /**
   * The node's `retry.non_retryable`, normalized (HTTP): a failed attempt whose status it matches
   * is reported `retryable: false`. Absent when the node has none.
   */
  nonRetryable?: NonRetryableStatus[];
  /**
   * The run's span as a W3C `traceparent` value: the attempt's spans are its children and an
   * HTTP node sends it on. Absent for a run older than tracing, and for an attempt re-dispatched
   * by the outbox relay or the lease sweep.
   */
  traceparent?: string;
}

/** What a job carries of its node's definition: `sensitive`, and `nonRetryable` when the node lists statuses. */
export type NodeJobFields = Pick<TaskJob, 'sensitive' | 'nonRetryable'>;

/** The {@link NodeJobFields} of `node` (undefined: a node that cannot be found, counted as sensitive). */
export function nodeJobFields(node: WorkflowNode | undefined): NodeJobFields {
  if (!node) return { sensitive: true };
  const nonRetryable = nonRetryableOf(node);
  return { ...(isSensitive(node) ? { sensitive: true } : {}), ...(nonRetryable.length ? { nonRetryable } : {}) };
}

/**
 * A task attempt a worker took for itself in the transaction of its own report (eager dispatch):
 * the task is already RUNNING under `leaseToken` (lease `runLeaseMs`, as after a claim), and
 * neither an outbox row nor a Bull job exists for it. The worker executes `job` at
 * once; if it dies, the lease expires and the lease sweep re-dispatches the task through Bull.
 */
export interface TakenTask {
  job: TaskJob;
  leaseToken: string;
}

/** The job id of a task attempt: enqueuing the same attempt twice is a no-op. */
export function jobId(taskId: string, attempt: number): string {
  return `${taskId}:${attempt}`;
}

/** Puts task jobs on their queues after commit (implemented over Bull in @weft/platform). */
export interface TaskDispatcher {
  /**
   * Enqueues each job (idempotent by {@link jobId}), delayed by its `notBefore` minus `now` —
   * the current time on the clock `notBefore` was computed with (the database's; default the
   * process clock), so a process whose clock is off does not shift retry backoff. With `ahead`,
   * the jobs go before the jobs already waiting on their queue (in the order given), as fair
   * dispatch asks for a tenant back from idle. Rejects if Redis cannot be reached.
   */
  enqueue(jobs: TaskJob[], now?: Date, opts?: { ahead?: boolean }): Promise<void>;
}

/**
 * Tells whether a task attempt's job is still on its queue (implemented over Bull in
 * @weft/platform), so the scheduler can re-dispatch tasks whose job vanished.
 */
export interface JobProbe {
  /**
   * True while the job `jobId` is waiting, delayed, active or paused on `queue`; false when it is
   * gone or finished (failed or completed). With `due`, a job still delayed is promoted to
   * waiting: the caller knows the attempt is due by the database's clock. Rejects if Redis cannot
   * be reached.
   */
  hasJob(queue: string, jobId: string, opts?: { due?: boolean }): Promise<boolean>;
}

/**
 * A change to a run, published after commit so subscribers follow it: with `change`, they apply
 * it to the state they hold; without, they read the run again.
 */
export interface RunUpdate {
  tenantId: string;
  runId: string;
  status: RunStatus;
  /**
   * The run's event sequence number after this change; absent for a change outside the run's
   * events (fair dispatch admitted one of its attempts): a watcher reads the run again.
   */
  seq?: number;
  /** What the event at `seq` changed, for a watched run whose change is small enough to carry. */
  change?: RunChange;
}

/**
 * What one event (`seq`, applied at `at`, an ISO 8601 instant with milliseconds) changed in a
 * run's rows, so a holder of the run's state at `seq - 1` can compute the state at `seq` without
 * reading it: the run row's columns the event set, the task rows it wrote (in write order) and the
 * history row it appended. Times are ISO 8601 strings (it travels as JSON). `reread` marks a change
 * that cannot be applied from this description (the holder reads the run again).
 */
export interface RunChange {
  seq: number;
  at: string;
  /** The run row's columns the event set besides `event_seq` and `updated_at` (which become `seq` and `at`). */
  run: {
    status?: RunStatus;
    output?: JsonValue | null;
    error?: string | null;
    finishedAt?: string | null;
  };
  tasks: TaskChange[];
  event: {
    type: string;
    nodeId: string | null;
    attempt: number | null;
    payload: JsonValue;
    actions: JsonValue[];
    ignored: string | null;
    error: string | null;
  };
  reread?: true;
}

/**
 * One write to task rows, as its SQL statement does it: `create` inserts a row (`createdAt`,
 * `updatedAt` = the change's `at`, `finishedAt` too when `finished`, `attempt` 0); `set` assigns
 * the fields given to task `id` (and `updatedAt` = `at` when `touch`; every value is absolute, so
 * applying a change twice leaves what applying it once does); `cancelActive` cancels every
 * PENDING, QUEUED, RUNNING or WAITING task of the run (error `reason`, no wake time, updated and
 * finished at `at`). `sensitive`: the task's node is `sensitive: true` (its input and output are
 * not carried).
 */
export type TaskChange =
  | {
      op: 'create';
      id: string;
      nodeId: string;
      nodeType: string;
      queue: string | null;
      status: string;
      iteration: number | null;
      /** A DO_WHILE body node's task (or a DO_WHILE node's): its loop iteration. */
      loopIteration?: number | null;
      input: JsonValue | null;
      output: JsonValue | null;
      error: string | null;
      branches: string[] | null;
      wakeAt: string | null;
      awaitedSignal: string | null;
      finished: boolean;
      sensitive: boolean;
    }
  | {
      op: 'set';
      id: string;
      touch: boolean;
      status?: string;
      attempt?: number;
      /** The attempts the task may make in all, when a resume granted it more than its node's `max_attempts`. */
      attemptLimit?: number;
      output?: JsonValue | null;
      error?: string | null;
      branches?: string[] | null;
      wakeAt?: string | null;
      awaitedSignal?: null;
      /** True: finished at `at`. */
      finished?: true;
    }
  | { op: 'cancelActive'; reason: string };

/** Publishes run updates across processes (implemented over Redis pub/sub in @weft/platform). */
export interface RunUpdatePublisher {
  publish(update: RunUpdate): Promise<void>;
  /**
   * Whether an update of the run that does not end it would reach a watcher now (a subscriber of
   * the run or of its tenant); absent: always. The coordinator builds `change` only then.
   */
  watching?(tenantId: string, runId: string): boolean;
  /**
   * Whether the run itself is watched (a `runUpdated` subscriber): its updates then carry what
   * changed (a tenant's feed needs only status and seq); absent: as {@link watching}.
   */
  watchingRun?(tenantId: string, runId: string): boolean;
}
