import { sql } from '../sql.js';
import type { Database, JobSource, Transaction } from './event-rows.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** An admitted backlog row read back with its task: what the job needs, and the task's current status and attempt. */
export type OutboxJob = JobSource & { outboxId: string; taskAttempt: number };

/**
 * The outbox (`outbox`), each queue's backlog: what a dispatch pass reads back of the rows it
 * admitted when their jobs are not in its process's memory (the writes are the event's, and
 * `weft_dispatch`'s).
 */
export class OutboxRepository extends TenantScopedRepository {
  constructor(db: Database | Transaction) {
    super(db);
  }

  /** The backlog rows `outboxIds`, each with its task and run; a row whose task is gone is absent. */
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
}
