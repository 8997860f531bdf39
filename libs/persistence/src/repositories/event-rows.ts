import type { DataSource, EntityManager } from 'typeorm';
import type { OutboxEntity } from '../entities/outbox.entity.js';
import type { RunEntity } from '../entities/run.entity.js';
import type { TaskEntity } from '../entities/task.entity.js';
import type { Json } from '../json.js';

/** The database the coordinator works on (a pool of connections). */
export type Database = DataSource;
/** A transaction opened by `withTenant`, bound to one tenant; every event runs in one. */
export type Transaction = EntityManager;

/** The `runs` columns an event decides on (no output), and when the run was created (for its duration). */
export type RunState = Pick<
  RunEntity,
  | 'id'
  | 'workflowId'
  | 'version'
  | 'status'
  | 'input'
  | 'config'
  | 'eventSeq'
  | 'parentRunId'
  | 'parentTaskId'
  | 'parentAttempt'
  | 'depth'
  | 'rootRunId'
  | 'createdAt'
  | 'traceparent'
  | 'traceCallerSpan'
  | 'priority'
  | 'concurrencyGroup'
  | 'pausedAt'
  | 'pauseReason'
  | 'deadlineAt'
  | 'decidedStatus'
  | 'decidedError'
  | 'decidedOutput'
>;

/** The `runs` columns of a {@link RunState}, aliased to its field names. */
export const RUN_STATE_COLUMNS = `id, workflow_id AS "workflowId", version, status, input, config, event_seq AS "eventSeq",
  parent_run_id AS "parentRunId", parent_task_id AS "parentTaskId", parent_attempt AS "parentAttempt", depth, root_run_id AS "rootRunId",
  created_at AS "createdAt", traceparent, trace_caller_span AS "traceCallerSpan", priority,
  concurrency_group AS "concurrencyGroup", paused_at AS "pausedAt", pause_reason AS "pauseReason",
  deadline_at AS "deadlineAt", decided_status AS "decidedStatus", decided_error AS "decidedError", decided_output AS "decidedOutput"`;

/**
 * The `tasks` columns the state machine decides on, no inputs or outputs. `error` is read only
 * for FAILED tasks (templates read it as `tasks.<id>.error`), `retryAt` only for WAITING ones.
 */
export type TaskState = Pick<
  TaskEntity,
  'nodeId' | 'id' | 'status' | 'attempt' | 'branches' | 'awaitedSignal' | 'error' | 'leaseToken' | 'iteration' | 'retryAt' | 'attemptLimit'
> & {
  /** A DO_WHILE node's task: its loop iteration (the previous iteration's output, its input, is read only when a template names it); absent on other tasks. */
  loop?: { iteration: number } | null;
};

/** The `tasks t` columns of a {@link TaskState}. */
export const TASK_STATE_COLUMNS = `t.node_id AS "nodeId", t.id, t.status, t.attempt, t.branches, t.awaited_signal AS "awaitedSignal",
  CASE WHEN t.status = 'FAILED' THEN t.error END AS error, t.lease_token AS "leaseToken", t.iteration,
  CASE WHEN t.status = 'WAITING' THEN t.retry_at END AS "retryAt", t.attempt_limit AS "attemptLimit",
  CASE WHEN t.node_type = 'DO_WHILE' THEN jsonb_build_object('iteration', t.loop_iteration) END AS loop`;

/** The condition on `tasks t` of the rows that make a run's state: every task but a DO_WHILE's archived iterations'. */
export const CURRENT_TASKS = 'NOT t.loop_archived';

/** A {@link RunState} read through `to_jsonb`, its timestamps (text there) as Dates again. */
export function runFromJson<R extends RunState>(run: R): R {
  const at = (v: Date | null) => (v === null ? null : new Date(v as unknown as string));
  return { ...run, createdAt: new Date(run.createdAt as unknown as string), pausedAt: at(run.pausedAt), deadlineAt: at(run.deadlineAt) };
}

/** A {@link TaskState} read through `to_jsonb`, its timestamp (text there) as a Date again. */
export function taskFromJson(t: TaskState): TaskState {
  return t.retryAt === null ? t : { ...t, retryAt: new Date(t.retryAt as unknown as string) };
}

/**
 * A task attempt read back to make its job again (outbox relay, lost-task sweep): the task, its
 * outbox row's queue and `notBefore`, and its run's workflow and version (whose definition says
 * whether the node is sensitive).
 */
export type JobSource = Pick<OutboxEntity, 'tenantId' | 'runId' | 'taskId' | 'attempt' | 'queue' | 'notBefore'> &
  Pick<TaskEntity, 'nodeId' | 'nodeType' | 'runtime' | 'input' | 'status'> &
  Pick<RunEntity, 'workflowId' | 'version' | 'traceparent'>;

/** The run row columns an event may change besides `event_seq` and `updated_at`. */
export interface RunPatch {
  status?: string;
  version?: number;
  input?: Json;
  config?: Json;
  /** `null` clears the column. */
  output?: Json | null;
  error?: string | null;
  finishedAt?: Date | null;
  /** Set by a pause, cleared (`null`) by a resume. */
  pausedAt?: Date | null;
  pauseReason?: string | null;
  /** Set when the run starts or is retried; `null` clears it. */
  deadlineAt?: Date | null;
  /** The outcome decided while a `finally` step runs; `null` clears them (the run finished). */
  decidedStatus?: string | null;
  decidedError?: string | null;
  decidedOutput?: Json | null;
}
