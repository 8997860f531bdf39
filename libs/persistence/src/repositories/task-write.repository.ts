import type { OutboxEntity } from '../entities/outbox.entity.js';
import type { TaskEntity } from '../entities/task.entity.js';
import type { Json } from '../json.js';
import { jsonb, sql } from '../sql.js';
import type { Transaction } from './event-rows.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';
import { GATE, TOOK, type WritePart } from './write-batch.js';

/** A new `tasks` row, as an event creates it (a task of a node, or one `for_each` iteration). */
export type NewTask = Pick<
  TaskEntity,
  'id' | 'nodeId' | 'nodeType' | 'queue' | 'runtime' | 'status' | 'iteration' | 'input' | 'output' | 'error' | 'branches' | 'wakeAt' | 'awaitedSignal'
> & {
  /** A DO_WHILE body node's task (or a DO_WHILE node's): its loop iteration; absent or null otherwise. */
  loopIteration?: number | null;
  /** True when `status` is already final: `finished_at` is the event's now. */
  finished: boolean;
  /** Set when the row's attempt is dispatched by the same event (its dispatch lease, or a taken attempt's run lease). */
  leaseExpiresAt?: Date | null;
  leaseToken?: string | null;
} & Partial<Pick<TaskEntity, 'flowConcurrencyKey' | 'flowConcurrencyLimit' | 'flowRateKey' | 'flowRateLimit' | 'flowRatePerSeconds'>>;

/**
 * A new (or replaced) `outbox` row: one task attempt in its queue's backlog, ready, or held
 * (`holdReason`, a retry's `BACKOFF`) until `heldUntil`.
 */
export type NewOutboxRow = Pick<OutboxEntity, 'taskId' | 'attempt' | 'queue' | 'notBefore' | 'priority'> &
  Partial<Pick<OutboxEntity, 'holdReason' | 'holdDetail' | 'heldUntil' | 'startBy'>> & {
    /**
     * The row of an attempt the reporting worker takes, for a fenced write only: written just when
     * the take is refused ({@link TOOK}), the attempt then waiting in the backlog like any other.
     */
    ifRefused?: boolean;
  };

/** The NodeCompleted event a task's completion keeps on its row: the event's seq and its actions' summaries as JSON text. */
export interface RecordedCompletion {
  seq: number;
  actions: string;
}

/**
 * What dispatching a stored task again needs of it (a retry, a released iteration); `limited`
 * when it obeys a node's concurrency or rate limit.
 */
export type StoredDispatch = Pick<TaskEntity, 'nodeId' | 'nodeType' | 'queue' | 'runtime' | 'input' | 'attempt'> & { limited: boolean };

const DISPATCH_COLUMNS = `node_id AS "nodeId", node_type AS "nodeType", queue, runtime, input, attempt,
  (flow_concurrency_key IS NOT NULL OR flow_rate_key IS NOT NULL) AS limited`;

/** {@link TaskWriteRepository.insertPart}'s statement: its status, lease end and token, and its WHERE (the forms differ by them). */
function insertTasks(status: string, leaseEnd: string, token: string, where: string): string {
  return `INSERT INTO tasks (tenant_id, id, run_id, node_id, node_type, queue, runtime, status, attempt, iteration, loop_iteration, input, output, error,
                          branches, wake_at, awaited_signal, created_at, updated_at, finished_at, lease_expires_at, lease_token,
                          flow_concurrency_key, flow_concurrency_limit, flow_rate_key, flow_rate_limit, flow_rate_per_seconds)
       SELECT $1, t.id, $2, t."nodeId", t."nodeType", t.queue, t.runtime, ${status}, 0, t.iteration, t."loopIteration", t.input, t.output, t.error,
              t.branches, t."wakeAt", t."awaitedSignal", $3, $3, CASE WHEN t.finished THEN $3::timestamptz END, ${leaseEnd}, ${token},
              t."flowConcurrencyKey", t."flowConcurrencyLimit", t."flowRateKey", t."flowRateLimit", t."flowRatePerSeconds"
         FROM jsonb_to_recordset($4::jsonb) AS t(id uuid, "nodeId" text, "nodeType" text, queue text, runtime text, status text, iteration int, "loopIteration" int,
              input jsonb, output jsonb, error text, branches text[], "wakeAt" timestamptz, "awaitedSignal" text, finished boolean,
              "leaseExpiresAt" timestamptz, "leaseToken" uuid, "flowConcurrencyKey" text, "flowConcurrencyLimit" int, "flowRateKey" text,
              "flowRateLimit" int, "flowRatePerSeconds" int)${where}`;
}

// Only the row the reporting worker takes carries its lease token: a DO_WHILE's own task, also
// inserted RUNNING, is never a take and stays RUNNING whatever the verdict.
const REFUSED = `t.status = 'RUNNING' AND t."leaseToken" IS NOT NULL AND NOT ${TOOK}`;
const INSERT_TASKS = insertTasks('t.status', 't."leaseExpiresAt"', 't."leaseToken"', '');
const INSERT_TASKS_GATED = insertTasks(
  `CASE WHEN ${REFUSED} THEN 'QUEUED' ELSE t.status END`,
  `CASE WHEN ${REFUSED} THEN NULL ELSE t."leaseExpiresAt" END`,
  `CASE WHEN ${REFUSED} THEN NULL ELSE t."leaseToken" END`,
  ` WHERE ${GATE}`,
);

/** {@link TaskWriteRepository.outboxPart}'s statement, with `where` (its gated form's condition). */
function upsertOutbox(where: string): string {
  return `INSERT INTO outbox (tenant_id, run_id, task_id, attempt, queue, not_before, created_at, priority, hold_reason, hold_detail, held_until,
                             start_by)
         SELECT $1, $2, o."taskId", o.attempt, o.queue, o."notBefore", $3, o.priority, o."holdReason", o."holdDetail", o."heldUntil",
                o."startBy"
           FROM jsonb_to_recordset($4::jsonb) AS o("taskId" uuid, attempt int, queue text, "notBefore" timestamptz, priority smallint,
                "holdReason" text, "holdDetail" text, "heldUntil" timestamptz, "ifRefused" boolean, "startBy" timestamptz)${where}
         ON CONFLICT (tenant_id, task_id) DO UPDATE
           SET attempt = EXCLUDED.attempt, queue = EXCLUDED.queue, not_before = EXCLUDED.not_before,
               created_at = EXCLUDED.created_at, claimed_at = NULL, enqueued_at = NULL, priority = EXCLUDED.priority,
               hold_reason = EXCLUDED.hold_reason, hold_detail = EXCLUDED.hold_detail, held_until = EXCLUDED.held_until, last_hold = NULL,
               start_by = EXCLUDED.start_by`;
}

const UPSERT_OUTBOX = upsertOutbox('');
const UPSERT_OUTBOX_GATED = upsertOutbox(` WHERE ${GATE} AND (o."ifRefused" IS NOT TRUE OR NOT ${TOOK})`);

const LEASE_TASK = `UPDATE tasks SET lease_expires_at = $4, lease_token = $5::uuid, status = $6
              WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND run_id = $7`;
const COMPLETE_TASK = `UPDATE tasks SET status = 'COMPLETED', output = $4::jsonb, error = NULL, updated_at = $5, finished_at = $5
              WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND run_id = $6`;
const FAIL_TASK = `UPDATE tasks SET status = 'FAILED', error = $4, updated_at = $5, finished_at = $5
              WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND run_id = $6`;
/** {@link COMPLETE_TASK} that also keeps the NodeCompleted event on the row: its seq ($7) and action summaries ($8). */
const COMPLETE_RECORDED = `UPDATE tasks SET status = 'COMPLETED', output = $4::jsonb, error = NULL, updated_at = $5, finished_at = $5,
                     completed_seq = $7, completed_actions = $8::jsonb, completed_actions_bytes = octet_length($8::jsonb::text)
              WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND run_id = $6`;
const LEASE_TASK_GATED = `${LEASE_TASK} AND ${GATE}`;
const COMPLETE_RECORDED_GATED = `${COMPLETE_RECORDED} AND ${GATE}`;
const COMPLETE_TASK_GATED = `${COMPLETE_TASK} AND ${GATE}`;
const FAIL_TASK_GATED = `${FAIL_TASK} AND ${GATE}`;

/**
 * The writes of a transition's actions to `tasks` and `outbox`, inside the event's tenant
 * transaction (construct it with that transaction's manager), each fenced by task id and, where
 * the action has one, attempt. Methods ending in `Part` return a {@link WritePart} for the
 * event's batched statement instead of running it; the others run at once and return the rows
 * they changed, which the caller checks against what the action expects.
 */
export class TaskWriteRepository extends TenantScopedRepository {
  constructor(m: Transaction) {
    super(m);
  }

  /**
   * Inserts `tasks` of run `runId` in one statement, stamped `now` (created, updated, finished when final).
   * In its gated form, a row inserted RUNNING (an attempt the reporting worker takes) is inserted
   * QUEUED with no lease instead when the fenced write's take is refused ({@link TOOK}).
   */
  insertPart(tenantId: string, runId: string, now: Date, tasks: readonly NewTask[]): WritePart {
    return { text: INSERT_TASKS, gated: INSERT_TASKS_GATED, params: [tenantId, runId, now, JSON.stringify(tasks)] };
  }

  /** Upserts the backlog rows of run `runId` (one per task: a new attempt replaces the old row, its marks and its hold). */
  outboxPart(tenantId: string, runId: string, now: Date, rows: readonly NewOutboxRow[]): WritePart {
    return { text: UPSERT_OUTBOX, gated: UPSERT_OUTBOX_GATED, params: [tenantId, runId, now, JSON.stringify(rows)] };
  }

  /**
   * An existing task's dispatched `attempt`: a taken one RUNNING under `leaseToken` until
   * `leaseExpiresAt`, any other QUEUED in its queue's backlog, with no lease.
   */
  leasePart(
    tenantId: string,
    runId: string,
    taskId: string,
    attempt: number,
    leaseExpiresAt: Date | null,
    leaseToken: string | null,
    running: boolean,
  ): WritePart {
    return {
      text: LEASE_TASK,
      gated: LEASE_TASK_GATED,
      params: [tenantId, taskId, attempt, leaseExpiresAt, leaseToken, running ? 'RUNNING' : 'QUEUED', runId],
    };
  }

  /**
   * Completes `attempt` of task `taskId` with `output`; expects one row. With `recorded`, the row
   * also keeps the NodeCompleted event that completes it (its `seq` and its actions' summaries,
   * `actions` as JSON text), which the history then derives from the row (`run_history`): the
   * caller writes no `run_events` row for that event.
   */
  completePart(tenantId: string, runId: string, taskId: string, attempt: number, output: Json, now: Date, recorded?: RecordedCompletion): WritePart {
    const expect = { rows: 1, what: `task ${taskId} attempt ${attempt} to complete` };
    if (recorded) {
      return {
        text: COMPLETE_RECORDED,
        gated: COMPLETE_RECORDED_GATED,
        params: [tenantId, taskId, attempt, jsonb(output), now, runId, recorded.seq, recorded.actions],
        expect,
      };
    }
    return { text: COMPLETE_TASK, gated: COMPLETE_TASK_GATED, params: [tenantId, taskId, attempt, jsonb(output), now, runId], expect };
  }

  /** Fails `attempt` of task `taskId` for good with `reason`; expects one row. */
  failPart(tenantId: string, runId: string, taskId: string, attempt: number, reason: string, now: Date): WritePart {
    return {
      text: FAIL_TASK,
      gated: FAIL_TASK_GATED,
      params: [tenantId, taskId, attempt, reason, now, runId],
      expect: { rows: 1, what: `task ${taskId} attempt ${attempt} to fail` },
    };
  }

  /** Makes WAITING iteration task `taskId` QUEUED; returns what dispatching it needs, or undefined when no row matched. */
  async releaseIteration(tenantId: string, taskId: string, now: Date): Promise<StoredDispatch | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<StoredDispatch>(
        m,
        `UPDATE tasks SET status = 'QUEUED', updated_at = $3
          WHERE tenant_id = $1 AND id = $2 AND status = 'WAITING' AND iteration IS NOT NULL
          RETURNING ${DISPATCH_COLUMNS}`,
        [tenantId, taskId, now],
      );
      return r.rows[0];
    });
  }

  /** Skips the WAITING iteration tasks `taskIds` with `reason`; returns how many rows changed. */
  async skipIterations(tenantId: string, taskIds: readonly string[], reason: string, now: Date): Promise<number> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(
        m,
        `UPDATE tasks SET status = 'SKIPPED', error = $3, updated_at = $4, finished_at = $4
          WHERE tenant_id = $1 AND id = ANY($2::uuid[]) AND status = 'WAITING' AND iteration IS NOT NULL`,
        [tenantId, taskIds, reason, now],
      );
      return r.rowCount;
    });
  }

  /**
   * A retry of the failed iterations of a `for_each` node: its aggregate task `aggregateId`
   * RUNNING again (output, error, recorded branches and finish cleared), and each of `iterations` (FAILED, SKIPPED or
   * CANCELLED) WAITING at `attempt + 1` with `attemptLimit`, its error, output, lease and finish
   * cleared; its stored input and flow keys stay. Returns the rows changed: the aggregate's (0 or
   * 1) and the iterations'.
   */
  async reopenIterations(
    tenantId: string,
    aggregateId: string,
    iterations: ReadonlyArray<{ taskId: string; attempt: number; attemptLimit: number }>,
    now: Date,
  ): Promise<{ aggregate: number; iterations: number }> {
    return this.inTenant(tenantId, async (m) => {
      const agg = await sql(
        m,
        `UPDATE tasks SET status = 'RUNNING', output = NULL, error = NULL, branches = NULL, finished_at = NULL, updated_at = $3
          WHERE tenant_id = $1 AND id = $2 AND iteration IS NULL`,
        [tenantId, aggregateId, now],
      );
      const its = await sql(
        m,
        `UPDATE tasks t SET status = 'WAITING', attempt = r.attempt + 1, attempt_limit = r.attempt_limit, error = NULL, output = NULL,
                finished_at = NULL, lease_token = NULL, lease_expires_at = NULL, updated_at = $5
           FROM unnest($2::uuid[], $3::int[], $4::int[]) AS r(id, attempt, attempt_limit)
          WHERE t.tenant_id = $1 AND t.id = r.id AND t.attempt = r.attempt AND t.iteration IS NOT NULL
            AND t.status IN ('FAILED', 'SKIPPED', 'CANCELLED')`,
        [tenantId, iterations.map((i) => i.taskId), iterations.map((i) => i.attempt), iterations.map((i) => i.attemptLimit), now],
      );
      return { aggregate: agg.rowCount, iterations: its.rowCount };
    });
  }

  /** Clears the timer of WAITING SUBWORKFLOW task `taskId` at `attempt` as its child run starts; returns the rows changed. */
  async disarmForChild(tenantId: string, taskId: string, attempt: number, now: Date): Promise<number> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(
        m,
        `UPDATE tasks SET wake_at = NULL, retry_at = NULL, updated_at = $4 WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND status = 'WAITING'`,
        [tenantId, taskId, attempt, now],
      );
      return r.rowCount;
    });
  }

  /** Moves WAITING SUBWORKFLOW task `taskId` to the next attempt, due at `notBefore`; returns the rows changed. */
  async retryChild(tenantId: string, taskId: string, attempt: number, reason: string, notBefore: Date, now: Date, attemptLimit?: number): Promise<number> {
    return this.inTenant(tenantId, async (m) => {
      // With `attemptLimit`, a resume retries a task whose attempts ran out: FAILED, it waits again.
      const r = await sql(
        m,
        `UPDATE tasks SET attempt = attempt + 1, error = $4, wake_at = $5, retry_at = $5, updated_at = $6, status = 'WAITING', finished_at = NULL,
                attempt_limit = COALESCE($7::int, attempt_limit)
          WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND (status = 'WAITING' OR ($7::int IS NOT NULL AND status = 'FAILED'))`,
        [tenantId, taskId, attempt, reason, notBefore, now, attemptLimit ?? null],
      );
      return r.rowCount;
    });
  }

  /**
   * Makes `attempt` + 1 of task `taskId` QUEUED with the last `reason` (and, from a resume of a
   * task that failed for good, no end time and `attemptLimit` attempts in all); returns what
   * dispatching it needs, or undefined.
   */
  async retry(tenantId: string, taskId: string, attempt: number, reason: string, now: Date, attemptLimit?: number): Promise<StoredDispatch | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<StoredDispatch>(
        m,
        `UPDATE tasks SET status = 'QUEUED', attempt = attempt + 1, error = $4, updated_at = $5, finished_at = NULL,
                attempt_limit = COALESCE($6::int, attempt_limit)
          WHERE tenant_id = $1 AND id = $2 AND attempt = $3
          RETURNING ${DISPATCH_COLUMNS}`,
        [tenantId, taskId, attempt, reason, now, attemptLimit ?? null],
      );
      return r.rows[0];
    });
  }

  /** Records the SWITCH branches task `taskId` chose; returns the rows changed. */
  async recordBranches(tenantId: string, taskId: string, branches: readonly string[], now: Date): Promise<number> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(m, `UPDATE tasks SET branches = $3::text[], updated_at = $4 WHERE tenant_id = $1 AND id = $2`, [tenantId, taskId, branches, now]);
      return r.rowCount;
    });
  }

  /** Ends WAITING task `taskId` with `status`, `output` and `reason`, clearing its timer and awaited signal; returns the rows changed. */
  async resolveWait(tenantId: string, taskId: string, status: string, output: Json | undefined, reason: string | null, now: Date): Promise<number> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(
        m,
        `UPDATE tasks SET status = $3, output = $4::jsonb, error = $5, wake_at = NULL, awaited_signal = NULL,
                updated_at = $6, finished_at = $6
          WHERE tenant_id = $1 AND id = $2 AND status = 'WAITING'`,
        [tenantId, taskId, status, jsonb(output), reason, now],
      );
      return r.rowCount;
    });
  }

  /**
   * Deletes the tasks of `nodeIds` in run `runId`, with their outbox rows (a retry from a node
   * resets it and its descendants). A deleted task's derived NodeCompleted entry becomes a
   * `run_events` row first, so the run's history keeps it.
   */
  async resetNodes(tenantId: string, runId: string, nodeIds: readonly string[]): Promise<void> {
    await this.inTenant(tenantId, (m) =>
      sql(
        m,
        `WITH kept AS (
           INSERT INTO run_events (tenant_id, run_id, seq, type, at, node_id, attempt, payload, actions)
           SELECT h.tenant_id, h.run_id, h.seq, h.type, h.at, h.node_id, h.attempt, h.payload, h.actions
             FROM run_history h JOIN tasks t ON t.tenant_id = h.tenant_id AND t.run_id = h.run_id AND t.completed_seq = h.seq
            WHERE t.tenant_id = $1 AND t.run_id = $2 AND t.node_id = ANY($3::text[]) AND t.completed_seq IS NOT NULL
         ),
         reset AS (
           DELETE FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = ANY($3::text[]) RETURNING id
         )
         DELETE FROM outbox WHERE tenant_id = $1 AND task_id IN (SELECT id FROM reset)`,
        [tenantId, runId, nodeIds],
      ),
    );
  }

  /**
   * Moves RUNNING DO_WHILE task `loopTaskId` of run `runId` to loop `iteration`, with `previous`
   * (the iteration just ended's output) as its input, and archives the
   * tasks of its body nodes `bodyNodeIds` so far (they stay readable). Returns the loop rows
   * changed (1, or 0 when the task is not RUNNING).
   */
  async nextLoopIteration(
    tenantId: string,
    runId: string,
    loopTaskId: string,
    bodyNodeIds: readonly string[],
    iteration: number,
    previous: Json,
    now: Date,
  ): Promise<number> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ n: number }>(
        m,
        // Split by iteration IS NULL, each UPDATE matches one of the partial unique (run, node)
        // indexes: one predicate for both scans every task of the run, archived ones included.
        `WITH archived AS (
           UPDATE tasks SET loop_archived = true, updated_at = $6
            WHERE tenant_id = $1 AND run_id = $2 AND node_id = ANY($4::text[]) AND iteration IS NULL AND NOT loop_archived
         ),
         archived_iterations AS (
           UPDATE tasks SET loop_archived = true, updated_at = $6
            WHERE tenant_id = $1 AND run_id = $2 AND node_id = ANY($4::text[]) AND iteration IS NOT NULL AND NOT loop_archived
         ),
         loop AS (
           UPDATE tasks SET loop_iteration = $5, input = $7::jsonb, updated_at = $6
            WHERE tenant_id = $1 AND id = $3 AND status = 'RUNNING' RETURNING 1
         )
         SELECT count(*)::int AS n FROM loop`,
        [tenantId, runId, loopTaskId, bodyNodeIds, iteration, now, jsonb(previous)],
      );
      return r.rows[0]?.n ?? 0;
    });
  }

  /** Cancels every task of run `runId` whose status is one of `active`, with `reason`. */
  async cancelActive(tenantId: string, runId: string, reason: string, active: readonly string[], now: Date): Promise<void> {
    await this.inTenant(tenantId, (m) =>
      sql(
        m,
        `UPDATE tasks SET status = 'CANCELLED', error = $3, wake_at = NULL, updated_at = $4, finished_at = $4
          WHERE tenant_id = $1 AND run_id = $2 AND status = ANY($5::text[])`,
        [tenantId, runId, reason, now, active],
      ),
    );
  }
}
