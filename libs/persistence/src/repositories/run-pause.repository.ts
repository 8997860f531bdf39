import { sql } from '../sql.js';
import type { Transaction } from './event-rows.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** The backlog hold of a paused run's attempts (`outbox.hold_reason`). */
export const RUN_PAUSED_HOLD = 'RUN_PAUSED';

/** SQL of the hold's sentence for a paused run's row `alias` (`run paused: <its reason>`), as the event writer words it. */
export function pausedDetail(alias: string): string {
  return `'run paused' || COALESCE(': ' || ${alias}.pause_reason, '')`;
}

/**
 * The transaction-level advisory lock every dispatch decision takes (`weft_dispatch`, the
 * fair-dispatch migration): a pause takes it too, so no pass admits a row of the run between the
 * pause's reading of its backlog and its commit.
 */
const DISPATCH_LOCK = 5_746_210_301;

/**
 * The dispatch side of pausing a run, in the pause's or resume's event transaction: what fair
 * dispatch may admit of the run. A paused run's backlog rows are held with no end
 * (`RUN_PAUSED`, `held_until` NULL), so `weft_dispatch` never looks at them; its resume releases
 * them. Times are the event's clock.
 */
export class RunPauseRepository extends TenantScopedRepository {
  constructor(m: Transaction) {
    super(m);
  }

  /**
   * Holds the backlog of run `runId` for its pause, in one statement after the dispatch lock: every attempt admitted but
   * not claimed by a worker yet (PENDING) goes back to QUEUED, its dispatch lease dropped (the
   * job already in its queue is then an old one, which a worker's claim drops) and its backlog
   * row in place again; every backlog row not admitted yet is held. Attempts a worker claimed
   * (RUNNING) are left to finish. `detail` is the hold's sentence. Returns the rows held.
   */
  async hold(tenantId: string, runId: string, detail: string, now: Date): Promise<number> {
    return this.inTenant(tenantId, async (m) => {
      // Waits for a pass under way to commit (its admissions are then read below, and taken
      // back); passes after it wait for this transaction, and find the rows held.
      await sql(m, `SELECT pg_advisory_xact_lock(${DISPATCH_LOCK})`);
      // One snapshot for both parts (taken after the lock): the tasks taken back were PENDING and
      // their rows marked enqueued in it, so the UPDATE below (QUEUED tasks, rows not enqueued)
      // never meets them.
      const r = await sql<{ held: number }>(
        m,
        `WITH back AS (
           UPDATE tasks SET status = 'QUEUED', lease_expires_at = NULL, lease_token = NULL, updated_at = $4
            WHERE tenant_id = $1 AND run_id = $2 AND status = 'PENDING' AND queue IS NOT NULL
           RETURNING id, attempt, queue
         ), requeued AS (
           INSERT INTO outbox (tenant_id, run_id, task_id, attempt, queue, not_before, created_at, priority, hold_reason, hold_detail)
           SELECT $1, $2, b.id, b.attempt, b.queue, $4, $4, r.priority, '${RUN_PAUSED_HOLD}', $3
             FROM back b JOIN runs r ON r.tenant_id = $1 AND r.id = $2
           ON CONFLICT (tenant_id, task_id) DO UPDATE
             SET attempt = EXCLUDED.attempt, queue = EXCLUDED.queue, claimed_at = NULL, enqueued_at = NULL,
                 hold_reason = EXCLUDED.hold_reason, hold_detail = EXCLUDED.hold_detail, held_until = NULL
           RETURNING 1
         ), held AS (
           UPDATE outbox o SET hold_reason = '${RUN_PAUSED_HOLD}', hold_detail = $3, held_until = NULL
             FROM tasks t
            WHERE t.tenant_id = $1 AND t.run_id = $2 AND t.status = 'QUEUED'
              AND o.tenant_id = t.tenant_id AND o.task_id = t.id AND o.attempt = t.attempt AND o.enqueued_at IS NULL
           RETURNING 1
         )
         SELECT (SELECT count(*) FROM requeued)::int + (SELECT count(*) FROM held)::int AS held`,
        [tenantId, runId, detail, now],
      );
      return r.rows[0]?.held ?? 0;
    });
  }

  /**
   * Releases the backlog of run `runId` at its resume: each row its pause held is ready again, or
   * held as a retry's `BACKOFF` while its attempt's backoff (`not_before`) has not passed; a
   * schedule-to-start deadline moves on by the time the row was both ready and paused (since
   * `pausedAt`). Returns the queues of the rows released, for fair dispatch to look at.
   */
  async release(tenantId: string, runId: string, now: Date, pausedAt: Date | null): Promise<string[]> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ queue: string }>(
        m,
        `WITH released AS (
           UPDATE outbox o
              SET hold_reason = CASE WHEN o.not_before > $3 THEN 'BACKOFF' END,
                  hold_detail = CASE WHEN o.not_before > $3
                                  THEN 'retry backoff until ' || to_char(o.not_before AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') END,
                  held_until = CASE WHEN o.not_before > $3 THEN o.not_before END,
                  start_by = o.start_by + greatest(interval '0', $3 - greatest(COALESCE($4::timestamptz, $3), o.created_at, o.not_before))
             FROM tasks t
            WHERE t.tenant_id = $1 AND t.run_id = $2 AND o.tenant_id = t.tenant_id AND o.task_id = t.id
              AND o.hold_reason = '${RUN_PAUSED_HOLD}' AND o.enqueued_at IS NULL
           RETURNING o.queue
         )
         SELECT DISTINCT queue FROM released ORDER BY queue`,
        [tenantId, runId, now, pausedAt],
      );
      return r.rows.map((row) => row.queue);
    });
  }

  /**
   * Marks the backlog rows the pause of run `runId` held as done (`enqueued_at` now, hold
   * cleared), when the run ends paused (cancelled, timed out): fair dispatch never looks at a held
   * row, so nothing else would.
   */
  async dropHolds(tenantId: string, runId: string, now: Date): Promise<void> {
    await this.inTenant(tenantId, (m) =>
      sql(
        m,
        `UPDATE outbox o SET enqueued_at = $3, hold_reason = NULL, hold_detail = NULL
           FROM tasks t
          WHERE t.tenant_id = $1 AND t.run_id = $2 AND o.tenant_id = t.tenant_id AND o.task_id = t.id
            AND o.hold_reason = '${RUN_PAUSED_HOLD}' AND o.enqueued_at IS NULL`,
        [tenantId, runId, now],
      ),
    );
  }

  /**
   * The WAITING SUBWORKFLOW tasks of run `runId` whose current attempt has no started child run (its
   * start was held by the pause) are made due at `now`, so their timer starts the child; returns
   * their ids and node ids.
   */
  async wakeHeldChildStarts(tenantId: string, runId: string, now: Date): Promise<Array<{ taskId: string; nodeId: string }>> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ taskId: string; nodeId: string }>(
        m,
        `UPDATE tasks t SET wake_at = $3, updated_at = $3
          WHERE t.tenant_id = $1 AND t.run_id = $2 AND t.status = 'WAITING' AND t.node_type = 'SUBWORKFLOW'
            AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.tenant_id = $1 AND c.parent_task_id = t.id AND c.parent_attempt = t.attempt AND c.event_seq > 0)
          RETURNING t.id AS "taskId", t.node_id AS "nodeId"`,
        [tenantId, runId, now],
      );
      return r.rows;
    });
  }
}
