import { sql } from '../sql.js';
import { RUN_STATE_COLUMNS, type RunState, type Transaction } from './event-rows.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** A concurrency group as a run's start names it: its key in `concurrency_groups` and what the listing shows. */
export interface GroupOfRun {
  /**
   * The scope and the resolved key in one text: `workflow:<id>/<key>` (a workflow id has no `/`,
   * so two workflows' keys never meet) or `tenant:<key>`.
   */
  groupKey: string;
  scope: 'workflow' | 'tenant';
  /** The workflow of a workflow-scoped group; null for a tenant-scoped one. */
  workflowId: string | null;
  key: string;
  /** The run limit of the version being started. */
  limit: number;
}

/** A QUEUED run of a group, with what starting it needs. */
export type QueuedRun = RunState & { startNodeId: string | null };

/**
 * The run slots of concurrency groups (`concurrency_groups`, `runs.concurrency_group`), inside
 * the tenant transaction of a run's start or end. The group's row is locked by every decision on
 * it; its active (RUNNING) and queued (QUEUED) runs are counted from `runs`.
 */
export class ConcurrencyGroupRepository extends TenantScopedRepository {
  constructor(m: Transaction) {
    super(m);
  }

  /** Creates or updates the group's row (its limit becomes `group.limit`) and locks it until the transaction ends. */
  async lock(tenantId: string, group: GroupOfRun, now: Date): Promise<void> {
    await this.inTenant(tenantId, (m) =>
      sql(
        m,
        `INSERT INTO concurrency_groups (tenant_id, group_key, scope, workflow_id, key, run_limit, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (tenant_id, group_key) DO UPDATE SET run_limit = EXCLUDED.run_limit, updated_at = EXCLUDED.updated_at`,
        [tenantId, group.groupKey, group.scope, group.workflowId, group.key, group.limit, now],
      ),
    );
  }

  /** Locks the row of group `groupKey` and resolves the key's text; undefined when the group does not exist. */
  async lockExisting(tenantId: string, groupKey: string): Promise<string | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ key: string }>(m, `SELECT key FROM concurrency_groups WHERE tenant_id = $1 AND group_key = $2 FOR UPDATE`, [tenantId, groupKey]);
      return r.rows[0]?.key;
    });
  }

  /** How many runs of group `groupKey` are RUNNING (hold a slot) and QUEUED (wait for one). */
  async counts(tenantId: string, groupKey: string): Promise<{ active: number; queued: number }> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ active: number; queued: number }>(
        m,
        `SELECT count(*) FILTER (WHERE status = 'RUNNING')::int AS active, count(*) FILTER (WHERE status = 'QUEUED')::int AS queued
           FROM runs WHERE tenant_id = $1 AND concurrency_group = $2 AND status IN ('RUNNING', 'QUEUED')`,
        [tenantId, groupKey],
      );
      return r.rows[0] ?? { active: 0, queued: 0 };
    });
  }

  /**
   * The id of the group's oldest RUNNING run whose outcome is not decided yet, or undefined. A run
   * whose `finally` step runs was cancelled (or ended) already: a second cancel would stop its step.
   */
  async oldestActive(tenantId: string, groupKey: string): Promise<string | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ id: string }>(
        m,
        `SELECT id FROM runs WHERE tenant_id = $1 AND concurrency_group = $2 AND status = 'RUNNING' AND decided_status IS NULL
          ORDER BY created_at, id LIMIT 1`,
        [tenantId, groupKey],
      );
      return r.rows[0]?.id;
    });
  }

  /**
   * Up to `limit` QUEUED runs of the group in the order they start (priority, then oldest), locked;
   * rows another transaction holds, and paused runs (which wait for their resume first), are skipped.
   */
  async nextQueued(tenantId: string, groupKey: string, limit: number): Promise<QueuedRun[]> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<QueuedRun>(
        m,
        `SELECT ${RUN_STATE_COLUMNS}, start_node_id AS "startNodeId" FROM runs
          WHERE tenant_id = $1 AND concurrency_group = $2 AND status = 'QUEUED' AND paused_at IS NULL
          ORDER BY priority, id LIMIT $3 FOR UPDATE SKIP LOCKED`,
        [tenantId, groupKey, limit],
      );
      return r.rows;
    });
  }

  /** Sets the group run `runId` belongs to (`group` null: none), as a retry onto another version or input resolved it. */
  async setRunGroup(tenantId: string, runId: string, group: Pick<GroupOfRun, 'groupKey' | 'key'> | null): Promise<void> {
    await this.inTenant(tenantId, (m) =>
      sql(m, `UPDATE runs SET concurrency_group = $3, concurrency_key = $4 WHERE tenant_id = $1 AND id = $2`, [
        tenantId,
        runId,
        group?.groupKey ?? null,
        group?.key ?? null,
      ]),
    );
  }

  /** Moves QUEUED run `runId` to RUNNING (it takes a slot); false when it is no longer QUEUED. */
  async admit(tenantId: string, runId: string, now: Date): Promise<boolean> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(m, `UPDATE runs SET status = 'RUNNING', updated_at = $3 WHERE tenant_id = $1 AND id = $2 AND status = 'QUEUED'`, [
        tenantId,
        runId,
        now,
      ]);
      return r.rowCount === 1;
    });
  }
}
