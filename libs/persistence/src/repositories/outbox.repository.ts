import { sql } from '../sql.js';
import { sqlInTenant } from '../tenant-transaction.js';
import type { Database, JobSource, Transaction } from './event-rows.js';
import { isDataSource, TenantScopedRepository } from './tenant-scoped.repository.js';

/** A claimed outbox row read back with its task: what the job needs, and the task's current status and attempt. */
export type OutboxJob = JobSource & { outboxId: string; taskAttempt: number };

/** One outbox row to mark enqueued: its id and the attempt it was claimed for. */
export interface OutboxMark {
  id: string;
  attempt: number;
}

/**
 * The outbox (`outbox`): the task attempts committed with their event and enqueued on Bull after
 * commit, and what the relay reads of the rows it claimed. Times are the database's clock unless
 * a test clock `now` is given (a Date; null in production).
 */
export class OutboxRepository extends TenantScopedRepository {
  constructor(db: Database | Transaction) {
    super(db);
  }

  /** The claimed outbox rows `outboxIds`, each with its task and run; a row whose task is gone is absent. */
  async jobs(tenantId: string, outboxIds: readonly string[]): Promise<OutboxJob[]> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<OutboxJob>(
        m,
        `SELECT o.id::text AS "outboxId", o.tenant_id AS "tenantId", o.run_id AS "runId", o.task_id AS "taskId", o.attempt, o.queue,
                o.not_before AS "notBefore", t.node_id AS "nodeId", t.node_type AS "nodeType", t.runtime, t.status,
                t.attempt AS "taskAttempt", t.input, r.workflow_id AS "workflowId", r.version, r.traceparent
           FROM outbox o
           JOIN tasks t ON t.tenant_id = o.tenant_id AND t.id = o.task_id
           JOIN runs r ON r.tenant_id = t.tenant_id AND r.id = t.run_id
          WHERE o.tenant_id = $1 AND o.id = ANY($2::bigint[])`,
        [tenantId, outboxIds],
      );
      return r.rows;
    });
  }

  /** Marks the outbox rows `marks` enqueued, each only while it still holds that attempt and is not marked. */
  async markRelayed(tenantId: string, marks: readonly OutboxMark[], now: Date | null): Promise<void> {
    await this.inTenant(tenantId, (m) =>
      sql(
        m,
        `UPDATE outbox o SET enqueued_at = COALESCE($2::timestamptz, clock_timestamp())
           FROM jsonb_to_recordset($3::jsonb) AS d(id bigint, attempt int)
          WHERE o.tenant_id = $1 AND o.id = d.id AND o.attempt = d.attempt AND o.enqueued_at IS NULL`,
        [tenantId, now, JSON.stringify(marks)],
      ),
    );
  }

  /**
   * Marks enqueued the outbox rows of the task attempts `jobs` just enqueued after their event's
   * commit, in one round trip (one statement, a transaction of its own: {@link sqlInTenant}).
   */
  async markEnqueued(tenantId: string, jobs: readonly { taskId: string; attempt: number }[], now: Date | null): Promise<void> {
    if (!isDataSource(this.db)) throw new Error('OutboxRepository.markEnqueued needs a Database: it is a transaction of its own');
    const rows = jobs.map((j) => ({ task_id: j.taskId, attempt: j.attempt }));
    await sqlInTenant(
      this.db,
      tenantId,
      `UPDATE outbox o SET enqueued_at = COALESCE($1::timestamptz, clock_timestamp())
         FROM jsonb_to_recordset($2::jsonb) AS j(task_id uuid, attempt int)
        WHERE o.tenant_id = $3::uuid AND o.task_id = ANY($4::uuid[])
          AND o.task_id = j.task_id AND o.attempt = j.attempt AND o.enqueued_at IS NULL`,
      [now, JSON.stringify(rows), tenantId, rows.map((r) => r.task_id)],
    );
  }
}
