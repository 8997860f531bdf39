import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Json } from '../json.js';

/**
 * `runs`: one workflow run. `status` is a RunStatus (`RUNNING`, `SUCCEEDED`, `FAILED`,
 * `CANCELLED`…); `event_seq` is the seq of the last `run_events` row (0 before the first).
 * The coordinator locks this row (`FOR UPDATE`) for every event, which serializes a run's events.
 */
@Entity({ name: 'runs' })
export class RunEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @PrimaryColumn({ name: 'id', type: 'uuid' })
  id: string;

  @Column({ name: 'workflow_id', type: 'text' })
  workflowId: string;

  @Column({ name: 'version', type: 'int' })
  version: number;

  @Column({ name: 'status', type: 'text' })
  status: string;

  @Column({ name: 'input', type: 'jsonb' })
  input: Json;

  @Column({ name: 'config', type: 'jsonb' })
  config: Json;

  @Column({ name: 'output', type: 'jsonb', nullable: true })
  output: Json | null;

  @Column({ name: 'error', type: 'text', nullable: true })
  error: string | null;

  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  @Column({ name: 'start_node_id', type: 'text', nullable: true })
  startNodeId: string | null;

  /** The run whose SUBWORKFLOW task started this one (same tenant); null for a run started over the API. */
  @Column({ name: 'parent_run_id', type: 'uuid', nullable: true })
  parentRunId: string | null;

  /** The parent's SUBWORKFLOW task that started this run. */
  @Column({ name: 'parent_task_id', type: 'uuid', nullable: true })
  parentTaskId: string | null;

  /** The attempt (0-based) of that task this run belongs to; a retry of the node starts a new child. */
  @Column({ name: 'parent_attempt', type: 'int', nullable: true })
  parentAttempt: number | null;

  /** For a child run, the run at the top of its tree (null for a run started over the API). */
  @Column({ name: 'root_run_id', type: 'uuid', nullable: true })
  rootRunId: string | null;

  /** 0 for a run started over the API; the parent's depth + 1 for a child run. */
  @Column({ name: 'depth', type: 'int' })
  depth: number;

  /** The run's span in its trace, as a W3C `traceparent` value; null for runs older than tracing. */
  @Column({ name: 'traceparent', type: 'text', nullable: true })
  traceparent: string | null;

  /** The span the run was started from (16 hex digits), parent of the run's span; null for a trace of its own. */
  @Column({ name: 'trace_caller_span', type: 'text', nullable: true })
  traceCallerSpan: string | null;

  /** The schedule that started this run; null for a run not started by a schedule. */
  @Column({ name: 'schedule_id', type: 'uuid', nullable: true })
  scheduleId: string | null;

  /** The nominal fire time this run was started for by its schedule (null for other runs). */
  @Column({ name: 'nominal_time', type: 'timestamptz', nullable: true })
  nominalTime: Date | null;

  /** Dispatch priority of the run's tasks within its tenant, 1 (first) to 5; 3 unless the start or the definition says. */
  @Column({ name: 'priority', type: 'smallint', default: 3 })
  priority: number;

  /** The concurrency group the run holds a slot of (scope and resolved key), and its key as resolved; NULL without one. */
  @Column({ name: 'concurrency_group', type: 'text', nullable: true })
  concurrencyGroup: string | null;

  @Column({ name: 'concurrency_key', type: 'text', nullable: true })
  concurrencyKey: string | null;

  /** The run's labels (string keys to string values), set by its start and never changed; `{}` for none and for child runs. */
  @Column({ name: 'labels', type: 'jsonb', default: {} })
  labels: Record<string, string>;

  /**
   * When the run was paused, while it is (its `status` stays RUNNING in the table: the API
   * reports PAUSED, see {@link apiRunStatus}); null otherwise.
   */
  @Column({ name: 'paused_at', type: 'timestamptz', nullable: true })
  pausedAt: Date | null;

  /** Why the run is paused, while it is: the operator's reason, or the node whose attempts ran out. */
  @Column({ name: 'pause_reason', type: 'text', nullable: true })
  pauseReason: string | null;

  /** When the run times out (its definition's `timeout_seconds` after its start or last retry); null without a deadline. */
  @Column({ name: 'deadline_at', type: 'timestamptz', nullable: true })
  deadlineAt: Date | null;

  /**
   * The outcome the run takes once its definition's `finally` step ended (SUCCEEDED, FAILED,
   * CANCELLED or TIMED_OUT), set when it was decided; the run stays RUNNING meanwhile. Null
   * otherwise (cleared when the run finishes).
   */
  @Column({ name: 'decided_status', type: 'text', nullable: true })
  decidedStatus: string | null;

  /** The decided outcome's error, while the `finally` step runs. */
  @Column({ name: 'decided_error', type: 'text', nullable: true })
  decidedError: string | null;

  /** The decided outcome's run output (a success), while the `finally` step runs. */
  @Column({ name: 'decided_output', type: 'jsonb', nullable: true })
  decidedOutput: Json | null;

  @Column({ name: 'event_seq', type: 'int' })
  eventSeq: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}

/**
 * The status a run has for the API: PAUSED for a RUNNING or QUEUED row with `paused_at` set, else
 * the row's `status`.
 */
export function apiRunStatus(run: Pick<RunEntity, 'status' | 'pausedAt'>): string {
  return (run.status === 'RUNNING' || run.status === 'QUEUED') && run.pausedAt != null ? 'PAUSED' : run.status;
}
