import type { RunEntity } from '../entities/run.entity.js';
import type { RunEventEntity } from '../entities/run-event.entity.js';
import type { TaskEntity } from '../entities/task.entity.js';

/**
 * The columns of `runs` that the API reads apart, after it knows their size: the JSON values,
 * and the error text (up to 8,192 characters, so a page of them is large too).
 */
export type RunJsonColumn = 'input' | 'config' | 'output' | 'error';
/** The columns of `tasks` that the API reads apart. */
export type TaskJsonColumn = 'input' | 'output' | 'error';
/** The columns of `run_events` that the API reads apart. */
export type EventJsonColumn = 'payload' | 'actions' | 'error';

/**
 * Bytes of each large column's text as PostgreSQL prints it (`octet_length(col::text)`, 0 for
 * SQL NULL, stored when the value is written): what answering with it costs, known without
 * reading the value. Only the columns
 * the reader asked sizes of are present.
 */
export type JsonBytes<K extends string> = Partial<Record<K, number>>;

/** A run row without its JSON values and error, with their sizes instead. */
export type SizedRun = Omit<RunEntity, RunJsonColumn | 'decidedOutput'> & { jsonBytes: JsonBytes<RunJsonColumn> };
/** A task row without its JSON values, with their sizes instead. */
export type SizedTask = Omit<TaskEntity, TaskJsonColumn | 'leaseToken' | 'leaseExpiresAt'> & { jsonBytes: JsonBytes<TaskJsonColumn> };
/** A history row without its JSON values, with their sizes instead. */
export type SizedEvent = Omit<RunEventEntity, EventJsonColumn> & { jsonBytes: JsonBytes<EventJsonColumn> };

/**
 * Default and largest page of a run's tasks and of its history ({@link RunRepository.tasksOfRun},
 * {@link RunRepository.eventsOfRun}); larger requests are refused by the API.
 */
export { RUN_ITEMS_PAGE_DEFAULT, RUN_ITEMS_PAGE_MAX } from '@weft/contract';

export const RUN_JSON_COLUMNS: readonly RunJsonColumn[] = ['input', 'config', 'output', 'error'];
export const TASK_JSON_COLUMNS: readonly TaskJsonColumn[] = ['input', 'output', 'error'];
export const EVENT_JSON_COLUMNS: readonly EventJsonColumn[] = ['payload', 'actions', 'error'];

/**
 * The size of column `c`: a `jsonb` column's stored size (`<c>_bytes`, kept by triggers), or for
 * a row written before those existed its text's length; a `text` column's length (read from
 * its TOAST pointer, without reading the value).
 */
export function storedBytes(alias: string, c: string): string {
  return c === 'error' ? `COALESCE(octet_length(${alias}${c}), 0)` : `COALESCE(${alias}${c}_bytes, octet_length(${alias}${c}::text), 0)`;
}
const bytes = (alias: string, c: string) => `${storedBytes(alias, c)}::int AS "${c}Bytes"`;
const sizes = (alias: string, cols: readonly string[]) => cols.map((c) => bytes(alias, c)).join(', ');

/** A comma before `sql` unless it is empty. */
const commaThen = (sql: string) => (sql ? `, ${sql}` : '');

/** The columns of `runs` but its JSON values, named as {@link RunEntity}'s properties, and the sizes of `cols`. */
export function sizedRunColumns(a = '', cols: readonly RunJsonColumn[] = RUN_JSON_COLUMNS): string {
  return `${a}tenant_id AS "tenantId", ${a}id, ${a}workflow_id AS "workflowId", ${a}version, ${a}status,
  ${a}idempotency_key AS "idempotencyKey", ${a}start_node_id AS "startNodeId", ${a}parent_run_id AS "parentRunId",
  ${a}parent_task_id AS "parentTaskId", ${a}parent_attempt AS "parentAttempt", ${a}root_run_id AS "rootRunId", ${a}depth,
  ${a}event_seq AS "eventSeq", ${a}created_at AS "createdAt", ${a}updated_at AS "updatedAt", ${a}finished_at AS "finishedAt",
  ${a}traceparent, ${a}trace_caller_span AS "traceCallerSpan", ${a}schedule_id AS "scheduleId", ${a}nominal_time AS "nominalTime",
  ${a}priority, ${a}concurrency_group AS "concurrencyGroup", ${a}concurrency_key AS "concurrencyKey", ${a}labels,
  ${a}paused_at AS "pausedAt", ${a}pause_reason AS "pauseReason", ${a}deadline_at AS "deadlineAt",
  ${a}decided_status AS "decidedStatus", ${a}decided_error AS "decidedError"${commaThen(sizes(a, cols))}`;
}

/** The columns of `tasks` the API shows but its JSON values, and the sizes of `cols`. */
export const sizedTaskColumns = (
  cols: readonly TaskJsonColumn[] = TASK_JSON_COLUMNS,
) => `tenant_id AS "tenantId", id, run_id AS "runId", node_id AS "nodeId", node_type AS "nodeType",
  queue, runtime, status, attempt, attempt_limit AS "attemptLimit", retry_at AS "retryAt", iteration, loop_iteration AS "loopIteration", loop_archived AS "loopArchived", branches, wake_at AS "wakeAt",
  awaited_signal AS "awaitedSignal", created_at AS "createdAt", updated_at AS "updatedAt", finished_at AS "finishedAt"${commaThen(sizes('', cols))}`;

/** The columns of `run_events` but its JSON values, and the sizes of `cols`. */
export const sizedEventColumns = (
  cols: readonly EventJsonColumn[] = EVENT_JSON_COLUMNS,
) => `tenant_id AS "tenantId", run_id AS "runId", seq, type, at, node_id AS "nodeId", attempt,
  ignored${commaThen(sizes('', cols))}`;

/**
 * The order of a run's tasks, also the key of their pages: creation order, and among the tasks
 * one event created together a node's own task (iteration NULL) right before its iterations by
 * index. Every row has a distinct key (`id` last).
 */
export const TASK_ORDER = `created_at, node_id, COALESCE(iteration, -1), id`;

/** Moves the `<col>Bytes` columns of a raw row into `jsonBytes`. */
export function withJsonBytes<K extends string, T>(row: Record<string, unknown>, cols: readonly K[]): T {
  const jsonBytes: JsonBytes<K> = {};
  for (const c of cols) {
    if (!(`${c}Bytes` in row)) continue;
    jsonBytes[c] = Number(row[`${c}Bytes`] ?? 0);
    delete row[`${c}Bytes`];
  }
  return Object.assign(row, { jsonBytes }) as T;
}

/** The requested `cols` among `allowed`, deduplicated in `allowed`'s order (so one statement text per set). */
export function pickColumns<K extends string>(cols: Iterable<K>, allowed: readonly K[]): K[] {
  const wanted = new Set(cols);
  return allowed.filter((c) => wanted.has(c));
}
