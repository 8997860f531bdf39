import { sql } from '../sql.js';
import { sqlInTenant } from '../tenant-transaction.js';
import { pausedDetail, RUN_PAUSED_HOLD } from './run-pause.repository.js';
import {
  RUN_STATE_COLUMNS,
  runFromJson,
  TASK_STATE_COLUMNS,
  CURRENT_TASKS,
  taskFromJson,
  type Database,
  type JobSource,
  type RunState,
  type TaskState,
  type Transaction,
} from './event-rows.js';
import type { QueueAccess } from './queue-reservation.repository.js';
import { isDataSource, TenantScopedRepository } from './tenant-scoped.repository.js';

/** A lease a worker asks to extend: its task attempt and the token its claim returned. */
export interface LeaseToExtend {
  taskId: string;
  attempt: number;
  leaseToken: string;
}

/** Most task rows a claim reads back with its run's state ({@link ClaimedState}): a larger run is left to the locking path. */
export const CLAIM_STATE_MAX_TASKS = 100;

/**
 * The state of a claimed task's run, read by the claim's statement: the run row, its tasks as
 * the machine decides on them (the claimed one as it was before the claim: PENDING and RUNNING
 * decide alike) and the time of its last event (`updated_at`).
 */
export interface ClaimedState {
  run: RunState;
  tasks: TaskState[];
  at: Date;
}

/** A task attempt the lease sweep claimed, read back with what its job needs and its lease token. */
export type SweptTask = JobSource & { leaseToken: string | null };

/**
 * The leases of dispatched worker attempts (`tasks.lease_token`, `tasks.lease_expires_at`): a
 * worker's claim and heartbeats, and what the lease sweep reads and revokes. Times are the
 * database's clock unless a test clock `now` is given (a Date; null in production).
 */
export class TaskLeaseRepository extends TenantScopedRepository {
  /** With a Database each call is its own transaction; `swept` may also run in a caller's transaction. */
  constructor(db: Database | Transaction) {
    super(db);
  }

  /**
   * Claims `attempt` of task `taskId` for a worker in one round trip (one statement, a
   * transaction of its own: {@link sqlInTenant}): the task becomes RUNNING with `leaseToken` and
   * a lease of `leaseMs` after now, if it is PENDING (admitted by fair dispatch) or RUNNING at that
   * attempt (a RUNNING one is claimed again: the previous execution's lease is superseded), has a
   * queue (a DO_WHILE's or `for_each` aggregate's own task, RUNNING with none, is never a
   * worker's; tested with COALESCE, which proves nothing about NULL, so the planner keeps to the
   * primary key rather than the partial index of active queued tasks) and, when `queue` is given (the queue the job was delivered on), the task is routed to that queue.
   * A QUEUED task is in its backlog and has no job: a job for it is an old one, dropped. The
   * claim of an attempt with a node rate limit records its start (`flow_rate_starts`). Returns
   * null when nothing matched, else the task's queue and the tenant's {@link QueueAccess} to it,
   * read in the same statement: `denied` means the queue is reserved for other tenants, and the
   * worker must fail the attempt instead of executing it. With `withState`, the same statement
   * reads the run's {@link ClaimedState} too (`state`, absent when the run has more than
   * {@link CLAIM_STATE_MAX_TASKS} tasks).
   */
  async claim(
    tenantId: string,
    taskId: string,
    attempt: number,
    leaseToken: string,
    leaseMs: number,
    now: Date | null,
    queue: string | null = null,
    withState = false,
  ): Promise<{ access: QueueAccess; queue: string; runId: string; state?: ClaimedState } | null> {
    if (!isDataSource(this.db)) throw new Error('TaskLeaseRepository.claim needs a Database: it is a transaction of its own');
    const r = await sqlInTenant<{
      access: QueueAccess;
      queue: string;
      runId: string;
      run: (RunState & { updatedAt: string }) | null;
      tasks: TaskState[] | null;
    }>(
      this.db,
      tenantId,
      `WITH c AS (SELECT COALESCE($1::timestamptz, clock_timestamp()) AS now),
            u AS (UPDATE tasks SET status = 'RUNNING', updated_at = c.now, lease_token = $2::uuid,
                         lease_expires_at = c.now + $3::int * interval '1 millisecond'
                    FROM c
                   WHERE tenant_id = $4::uuid AND id = $5::uuid AND attempt = $6::int
                     AND status IN ('PENDING', 'RUNNING') AND COALESCE(queue, '') <> '' AND ($7::text IS NULL OR queue = $7::text)
                  RETURNING tenant_id, id, run_id, attempt, queue, flow_rate_key, c.now AS now),
            s AS (INSERT INTO flow_rate_starts (tenant_id, rate_key, started_at, task_id, attempt)
                  SELECT tenant_id, flow_rate_key, now, id, attempt FROM u WHERE flow_rate_key IS NOT NULL)
       SELECT weft_queue_access(u.queue) AS access, u.queue, u.run_id AS "runId",
              CASE WHEN $8::boolean THEN (SELECT to_jsonb(r) FROM (SELECT ${RUN_STATE_COLUMNS}, updated_at AS "updatedAt" FROM runs
                                                                   WHERE tenant_id = u.tenant_id AND id = u.run_id) r) END AS run,
              CASE WHEN $8::boolean THEN (SELECT jsonb_agg(to_jsonb(t)) FROM (SELECT ${TASK_STATE_COLUMNS} FROM tasks t
                                                                              WHERE t.tenant_id = u.tenant_id AND t.run_id = u.run_id AND ${CURRENT_TASKS}
                                                                              LIMIT ${CLAIM_STATE_MAX_TASKS + 1}) t) END AS tasks
         FROM u`,
      [now, leaseToken, leaseMs, tenantId, taskId, attempt, queue, withState],
    );
    const row = r.rows[0];
    if (r.rowCount !== 1 || !row) return null;
    const claimed = { access: row.access ?? 'shared', queue: row.queue, runId: row.runId };
    if (!row.run || !row.tasks || row.tasks.length > CLAIM_STATE_MAX_TASKS) return claimed;
    // to_jsonb gives timestamps as text.
    const { updatedAt, ...run } = row.run;
    const state: ClaimedState = {
      run: runFromJson(run),
      tasks: row.tasks.map(taskFromJson),
      at: new Date(updatedAt),
    };
    return { ...claimed, state };
  }

  /**
   * Hands back each of `leases` whose task is still RUNNING at that attempt with that token: the
   * task becomes PENDING again (dispatched, waiting for a worker), its token is cleared (a late report of the execution is then
   * ignored as stale) and its lease ends now, so another worker's claim takes it and, should its
   * job be lost, the lease sweep re-dispatches it at once. A task of a paused run goes back to
   * its backlog instead, QUEUED and held (`RUN_PAUSED`) until the resume (its old job is then
   * refused by the claim). One statement; returns the tokens handed back (lower case).
   */
  async release(tenantId: string, leases: readonly LeaseToExtend[], now: Date | null): Promise<Set<string>> {
    return this.inTenant(tenantId, async (m) => {
      const rows = JSON.stringify(leases.map((l) => ({ task_id: l.taskId, attempt: l.attempt, token: l.leaseToken })));
      const r = await sql<{ token: string }>(
        m,
        `WITH c AS (SELECT COALESCE($3::timestamptz, clock_timestamp()) AS now),
              back AS (
                UPDATE tasks t SET status = CASE WHEN r.paused_at IS NULL THEN 'PENDING' ELSE 'QUEUED' END, lease_token = NULL,
                                   updated_at = c.now, lease_expires_at = CASE WHEN r.paused_at IS NULL THEN c.now END
                  FROM c, jsonb_to_recordset($2::jsonb) AS q(task_id uuid, attempt int, token uuid), runs r
                 WHERE t.tenant_id = $1 AND t.id = q.task_id AND t.attempt = q.attempt AND t.lease_token = q.token
                   AND t.status = 'RUNNING' AND r.tenant_id = t.tenant_id AND r.id = t.run_id
                RETURNING q.token::text AS token, t.tenant_id, t.run_id, t.id, t.attempt, t.queue, r.priority, r.paused_at, r.pause_reason, c.now),
              held AS (
                INSERT INTO outbox (tenant_id, run_id, task_id, attempt, queue, not_before, created_at, priority, hold_reason, hold_detail)
                SELECT b.tenant_id, b.run_id, b.id, b.attempt, b.queue, b.now, b.now, b.priority, '${RUN_PAUSED_HOLD}',
                       ${pausedDetail('b')}
                  FROM back b WHERE b.paused_at IS NOT NULL AND b.queue IS NOT NULL
                ON CONFLICT (tenant_id, task_id) DO UPDATE
                  SET attempt = EXCLUDED.attempt, queue = EXCLUDED.queue, not_before = EXCLUDED.not_before, created_at = EXCLUDED.created_at,
                      claimed_at = NULL, enqueued_at = NULL, priority = EXCLUDED.priority, hold_reason = EXCLUDED.hold_reason,
                      hold_detail = EXCLUDED.hold_detail, held_until = NULL, last_hold = NULL)
         SELECT token FROM back`,
        [tenantId, rows, now],
      );
      return new Set(r.rows.map((row) => row.token));
    });
  }

  /**
   * Extends to now + `leaseMs` each of `leases` whose task is still RUNNING at that attempt with
   * that token, in one UPDATE; returns the tokens it extended (lower case).
   */
  async extend(tenantId: string, leases: readonly LeaseToExtend[], leaseMs: number, now: Date | null): Promise<Set<string>> {
    return this.inTenant(tenantId, async (m) => {
      const rows = JSON.stringify(leases.map((l) => ({ task_id: l.taskId, attempt: l.attempt, token: l.leaseToken })));
      const r = await sql<{ token: string }>(
        m,
        `UPDATE tasks t SET lease_expires_at = COALESCE($3::timestamptz, clock_timestamp()) + $4 * interval '1 millisecond'
           FROM jsonb_to_recordset($2::jsonb) AS q(task_id uuid, attempt int, token uuid)
          WHERE t.tenant_id = $1 AND t.id = q.task_id AND t.attempt = q.attempt AND t.lease_token = q.token
            AND t.status = 'RUNNING'
         RETURNING q.token::text AS token`,
        [tenantId, rows, now, leaseMs],
      );
      return new Set(r.rows.map((row) => row.token));
    });
  }

  /**
   * The tasks `taskIds` the sweep claimed, with what their jobs need; `notBefore` is the outbox
   * row's, or `now` (the transaction's clock reading) for an attempt that has none (taken
   * eagerly by a worker).
   */
  async swept(tenantId: string, taskIds: readonly string[], now: Date): Promise<SweptTask[]> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<SweptTask>(
        m,
        `SELECT t.tenant_id AS "tenantId", t.run_id AS "runId", t.id AS "taskId", t.attempt, t.queue, t.node_id AS "nodeId",
                t.node_type AS "nodeType", t.runtime, t.input, t.status, t.lease_token AS "leaseToken",
                COALESCE(o.not_before, $3::timestamptz) AS "notBefore", r.workflow_id AS "workflowId", r.version, r.traceparent
           FROM tasks t
           JOIN runs r ON r.tenant_id = t.tenant_id AND r.id = t.run_id
           LEFT JOIN outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id AND o.attempt = t.attempt
          WHERE t.tenant_id = $1 AND t.id = ANY($2::uuid[])`,
        [tenantId, taskIds, now],
      );
      return r.rows;
    });
  }

  /**
   * Puts `attempt` of task `taskId`, whose job the sweep found gone, back in its queue's backlog:
   * if it is still PENDING or RUNNING at that attempt under `leaseToken` (null for one no worker
   * claimed), it becomes QUEUED with no lease and no token (the previous execution's late report
   * is then ignored as stale, and the node slot it held is free), and its backlog row is ready
   * again, created for an attempt a worker took eagerly — or, when its run is paused, held
   * (`RUN_PAUSED`) until the resume. Returns the task's queue, or null when the task moved on
   * meanwhile.
   */
  async requeue(tenantId: string, taskId: string, attempt: number, leaseToken: string | null, now: Date | null): Promise<string | null> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ queue: string }>(
        m,
        `WITH c AS (SELECT COALESCE($5::timestamptz, clock_timestamp()) AS now),
              t AS (UPDATE tasks t SET status = 'QUEUED', lease_token = NULL, lease_expires_at = NULL, updated_at = c.now
                      FROM c
                     WHERE t.tenant_id = $1 AND t.id = $2 AND t.attempt = $3 AND t.status IN ('PENDING', 'RUNNING')
                       AND t.lease_token IS NOT DISTINCT FROM $4::uuid AND t.queue IS NOT NULL
                    RETURNING t.tenant_id, t.id, t.run_id, t.attempt, t.queue)
         INSERT INTO outbox (tenant_id, run_id, task_id, attempt, queue, not_before, created_at, priority, hold_reason, hold_detail)
         SELECT t.tenant_id, t.run_id, t.id, t.attempt, t.queue, c.now, c.now, r.priority,
                CASE WHEN r.paused_at IS NOT NULL THEN '${RUN_PAUSED_HOLD}' END,
                CASE WHEN r.paused_at IS NOT NULL THEN ${pausedDetail('r')} END
           FROM t CROSS JOIN c JOIN runs r ON r.tenant_id = t.tenant_id AND r.id = t.run_id
         ON CONFLICT (tenant_id, task_id) DO UPDATE
           SET attempt = EXCLUDED.attempt, queue = EXCLUDED.queue, not_before = EXCLUDED.not_before, created_at = EXCLUDED.created_at,
               claimed_at = NULL, enqueued_at = NULL, priority = EXCLUDED.priority, hold_reason = EXCLUDED.hold_reason,
               hold_detail = EXCLUDED.hold_detail, held_until = NULL, last_hold = NULL
         RETURNING queue`,
        [tenantId, taskId, attempt, leaseToken, now],
      );
      return r.rows[0]?.queue ?? null;
    });
  }
}
