import { sql } from '../sql.js';
import {
  CURRENT_TASKS,
  RUN_STATE_COLUMNS,
  runFromJson,
  TASK_STATE_COLUMNS,
  taskFromJson,
  type RunState,
  type TaskState,
  type Transaction,
} from './event-rows.js';
import type { Json } from '../json.js';
import { RUN_LABELS_INSERT } from './run-labels.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** A run row locked for an event, the database's clock after the lock, and the reported task. */
export interface LockedRun {
  run: RunState;
  /** `clock_timestamp()` read after the run lock was granted. */
  dbNow: Date;
  /** The reported task's row, locked after the run's; null when no task was named or it is not the run's. */
  task: TaskState | null;
  /**
   * Whether the reporting worker may take an attempt from the queue it asked for (eager
   * dispatch): false when that queue is reserved for other tenants or another tenant's backlog
   * comes first in fair order; undefined when none was asked.
   */
  mayTake?: boolean;
  /** The reported task's queue when the task holds a slot of a node's concurrency key (an end of its attempt frees one). */
  slotQueue?: string;
}

/** A new top-level run as its start writes it (`event_seq` 0). */
export interface NewRun {
  id: string;
  /** RUNNING (started at once) or QUEUED (waiting for a slot of its concurrency group). */
  status: 'RUNNING' | 'QUEUED';
  /** The concurrency group the run joins and its resolved key; null without one. */
  concurrencyGroup: string | null;
  concurrencyKey: string | null;
  workflowId: string;
  version: number;
  input: Json;
  config: Json;
  idempotencyKey: string | null;
  startNodeId: string | null;
  traceparent: string | null;
  traceCallerSpan: string | null;
  /** The schedule that starts the run and the nominal time it fires for; absent for other runs. */
  scheduleId?: string | null;
  nominalTime?: Date | null;
  /** Dispatch priority of the run's tasks within its tenant, 1 (first) to 5. */
  priority: number;
  /** The run's labels, checked by the caller; `{}` for none. */
  labels: Record<string, string>;
  /** The deadline its start set (`timeout_seconds`), for a start written in one statement (`startWrite`); else the start's event sets it. */
  deadlineAt?: Date | null;
  /** `created_at` and `updated_at`. */
  now: Date;
}

/**
 * The reads and writes of one event on its own run, inside the event's tenant transaction
 * (construct it with that transaction's manager): the run lock, the node states, the clock, a
 * new run's row and a timer's re-arming.
 */
/** The run an idempotency key names, as a start with the key compares itself to it. */
export interface IdempotentRun {
  id: string;
  workflowId: string;
  version: number;
  /** Its input equals the one compared with (as `jsonb`). */
  sameInput: boolean;
  /** Its config equals the one compared with (as `jsonb`). */
  sameConfig: boolean;
}

export class RunEventRepository extends TenantScopedRepository {
  constructor(m: Transaction) {
    super(m);
  }

  /**
   * One round trip: locks the run row (`FOR UPDATE`, which serializes a run's events across
   * processes), then the row of task `taskId` if it belongs to the run (`FOR NO KEY UPDATE`,
   * always run before task), then reads the clock. The task row is read by locking it: a plain
   * read would see the statement's snapshot, taken before any wait for the run lock, and miss a
   * claim or a lease revocation committed meanwhile; a locked row is its latest committed
   * version. With `takeQueue` (a worker's report asking to take its next attempt from that queue)
   * the same statement asks `weft_may_take` whether it may: the queue is not reserved for other
   * tenants, and no other tenant's ready backlog comes first in fair order. Undefined when the
   * tenant has no such run.
   */
  async lockForEvent(tenantId: string, runId: string, taskId: string | null, takeQueue: string | null = null): Promise<LockedRun | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ run: RunState; db_now: Date; task: TaskState | null; may_take: boolean | null }>(
        m,
        `WITH r AS MATERIALIZED (SELECT ${RUN_STATE_COLUMNS} FROM runs WHERE tenant_id = $1 AND id = $2 FOR UPDATE),
              t AS MATERIALIZED (SELECT ${TASK_STATE_COLUMNS}, CASE WHEN t.flow_concurrency_key IS NOT NULL THEN t.queue END AS "slotQueue" FROM tasks t
                                  WHERE t.tenant_id = $1 AND t.id = $3::uuid AND t.run_id = $2 AND EXISTS (SELECT 1 FROM r)
                                  FOR NO KEY UPDATE)
         SELECT to_jsonb(r) AS run, clock_timestamp() AS db_now, CASE WHEN t.id IS NULL THEN NULL ELSE to_jsonb(t) END AS task,
                CASE WHEN $4::text IS NULL THEN NULL ELSE weft_may_take($4::text) END AS may_take
           FROM r LEFT JOIN t ON true`,
        [tenantId, runId, taskId, takeQueue],
      );
      const row = r.rows[0];
      if (!row) return undefined;
      // to_jsonb gives the timestamp as text.
      const run = runFromJson(row.run);
      const slotQueue = (row.task as { slotQueue?: string | null } | null)?.slotQueue;
      const task = row.task === null ? null : taskFromJson(row.task);
      if (task) delete (task as { slotQueue?: unknown }).slotQueue;
      return { run, dbNow: row.db_now, task, ...(row.may_take === null ? {} : { mayTake: row.may_take }), ...(slotQueue ? { slotQueue } : {}) };
    });
  }

  /** Locks run `runId` (`FOR UPDATE`) and returns its state; undefined when there is none. */
  async lock(tenantId: string, runId: string): Promise<RunState | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<RunState>(m, `SELECT ${RUN_STATE_COLUMNS} FROM runs WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, [tenantId, runId]);
      return r.rows[0];
    });
  }

  /** Every task row of run `runId` as the machine decides on it (no inputs or outputs). */
  async taskStates(tenantId: string, runId: string): Promise<TaskState[]> {
    return this.inTenant(tenantId, async (m) => {
      return (
        await sql<TaskState>(m, `SELECT ${TASK_STATE_COLUMNS} FROM tasks t WHERE t.tenant_id = $1 AND t.run_id = $2 AND ${CURRENT_TASKS}`, [tenantId, runId])
      ).rows;
    });
  }

  /** True when task `taskId` of run `runId` is WAITING. */
  async isWaiting(tenantId: string, runId: string, taskId: string): Promise<boolean> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(m, `SELECT 1 FROM tasks WHERE tenant_id = $1 AND id = $2 AND run_id = $3 AND status = 'WAITING'`, [tenantId, taskId, runId]);
      return r.rowCount === 1;
    });
  }

  /** The database's `clock_timestamp()`, read now in the transaction. */
  async clock(tenantId: string): Promise<Date> {
    return this.inTenant(tenantId, async (m) => (await sql<{ now: Date }>(m, `SELECT clock_timestamp() AS now`, [])).rows[0]!.now);
  }

  /**
   * The tenant's run started with `idempotencyKey`, if any: its id, workflow and version, and
   * whether its stored input and config equal `input` and `config` as `jsonb` compares them (key
   * order and number spelling do not matter: `{"a":1.0,"b":2}` equals `{"b":2,"a":1}`).
   */
  async runByIdempotencyKey(tenantId: string, idempotencyKey: string, input: unknown, config: unknown): Promise<IdempotentRun | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<IdempotentRun>(
        m,
        `SELECT id, workflow_id AS "workflowId", version, input = $3::jsonb AS "sameInput", config = $4::jsonb AS "sameConfig"
           FROM runs WHERE tenant_id = $1 AND idempotency_key = $2`,
        [tenantId, idempotencyKey, JSON.stringify(input), JSON.stringify(config)],
      );
      return r.rows[0];
    });
  }

  /**
   * Inserts a new top-level run (`event_seq` 0) and its `run_labels` rows. Returns false,
   * inserting nothing, when the tenant already has a run with `run.idempotencyKey` (the partial
   * unique index decides between concurrent starts).
   */
  async insertRun(tenantId: string, run: NewRun): Promise<boolean> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(
        m,
        `WITH r AS (INSERT INTO runs (tenant_id, id, workflow_id, version, status, input, config, idempotency_key, start_node_id,
                                      event_seq, created_at, updated_at, traceparent, trace_caller_span, schedule_id, nominal_time, priority,
                                      concurrency_group, concurrency_key, labels)
                    VALUES ($1, $2, $3, $4, $15, $5::jsonb, $6::jsonb, $7, $8, 0, $9, $9, $10, $11, $12, $13, $14, $16, $17, $18::jsonb)
                    ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
                    RETURNING id),
              l AS (${RUN_LABELS_INSERT('$1::uuid', '$2::uuid', '$18::jsonb')})
         SELECT id FROM r`,
        [
          tenantId,
          run.id,
          run.workflowId,
          run.version,
          JSON.stringify(run.input),
          JSON.stringify(run.config),
          run.idempotencyKey,
          run.startNodeId,
          run.now,
          run.traceparent,
          run.traceCallerSpan,
          run.scheduleId ?? null,
          run.nominalTime ?? null,
          run.priority,
          run.status,
          run.concurrencyGroup,
          run.concurrencyKey,
          JSON.stringify(run.labels),
        ],
      );
      return r.rowCount === 1;
    });
  }

  /**
   * Sets the `wake_at` of WAITING task `taskId` to `wakeAt`: null for a timer nobody will act on
   * again (never claimed again), a Date for one that came too early (a retry's due time).
   */
  async rearmTimer(tenantId: string, taskId: string, wakeAt: Date | null): Promise<void> {
    await this.inTenant(tenantId, (m) =>
      sql(m, `UPDATE tasks SET wake_at = $3 WHERE tenant_id = $1 AND id = $2 AND status = 'WAITING'`, [tenantId, taskId, wakeAt]),
    );
  }
}
