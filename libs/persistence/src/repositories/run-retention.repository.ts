import type { DataSource } from 'typeorm';
import { callDefiner } from '../claims.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** The run statuses that end a run: a tree is deleted only when every run of it has one. */
const ENDED = `('SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT')`;

/** What one {@link RunRetentionRepository.deleteExpired} statement deleted. */
export interface RetentionBatch {
  /** Top-level runs deleted, each with its whole tree. */
  roots: number;
  /** Runs deleted, roots and their descendants together. */
  runs: number;
}

/**
 * The tenants with a run retention (`tenants.retention_days` set), by id, through the SECURITY
 * DEFINER function `weft_retention_tenants()`; the caller deletes in each tenant's transaction.
 */
export async function retentionTenants(ds: DataSource): Promise<string[]> {
  const rows = await callDefiner<{ tenant_id: string }>(ds, 'SELECT tenant_id FROM weft_retention_tenants()', []);
  return rows.map((r) => r.tenant_id);
}

/**
 * Deletion of a tenant's run trees past its retention. A tree is a top-level run (no parent) and
 * every run started under it through SUBWORKFLOW (`root_run_id`); it is deleted as a whole or not
 * at all, once its root ended more than `tenants.retention_days` days before the database's
 * `now()` and no run of it is still QUEUED, PENDING or RUNNING.
 */
export class RunRetentionRepository extends TenantScopedRepository {
  constructor(db: DataSource) {
    super(db);
  }

  /**
   * Deletes, in one statement and transaction, up to `maxRoots` of the tenant's expired run trees,
   * oldest end first, and no more roots once `maxRuns` runs are reached (the first tree is always
   * taken, whatever its size). Roots another transaction holds (a retry under way, another
   * scheduler's batch) are skipped (`FOR UPDATE SKIP LOCKED`); the lock also orders this batch
   * against a retry, which locks the root first, so a run that starts again is never deleted.
   *
   * Deleting a root deletes its child runs, tasks, signals, history rows (`run_events`) and
   * attempt logs through their `ON DELETE CASCADE` keys; the trees' outbox rows, which have no
   * foreign key, are deleted by the same statement (a data-modifying CTE runs whether or not its
   * rows are read). Found through `runs_retention` (tenant, end
   * time), so a tenant with nothing expired costs one index probe. Returns 0 and 0 when the
   * tenant has no retention.
   */
  async deleteExpired(tenantId: string, maxRoots: number, maxRuns: number): Promise<RetentionBatch> {
    const r = await this.queryInTenant<{ roots: number; runs: number }>(
      tenantId,
      `WITH expired AS (
         SELECT r.id, r.finished_at FROM runs r
          WHERE r.tenant_id = $1 AND r.parent_run_id IS NULL AND r.finished_at IS NOT NULL AND r.status IN ${ENDED}
            AND r.finished_at < (SELECT now() - make_interval(days => t.retention_days) FROM tenants t WHERE t.id = $1)
            AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.tenant_id = $1 AND c.root_run_id = r.id AND c.status NOT IN ${ENDED})
          ORDER BY r.finished_at, r.id
          LIMIT $2
          FOR UPDATE OF r SKIP LOCKED
       ), sized AS (
         SELECT e.id, sum(1 + (SELECT count(*) FROM runs c WHERE c.tenant_id = $1 AND c.root_run_id = e.id))
                  OVER (ORDER BY e.finished_at, e.id) AS upto
           FROM expired e
       ), roots AS (
         SELECT s.id FROM sized s WHERE s.upto <= $3 OR s.upto = (SELECT min(upto) FROM sized)
       ), tree AS (
         SELECT roots.id FROM roots
         UNION ALL
         SELECT c.id FROM runs c JOIN roots ON c.tenant_id = $1 AND c.root_run_id = roots.id
       ), outbox_gone AS (
         DELETE FROM outbox o USING tasks t, tree
          WHERE t.tenant_id = $1 AND t.run_id = tree.id AND o.tenant_id = $1 AND o.task_id = t.id
         RETURNING 1
       ), roots_gone AS (
         DELETE FROM runs r USING roots WHERE r.tenant_id = $1 AND r.id = roots.id RETURNING r.id
       )
       SELECT (SELECT count(*) FROM roots_gone)::int AS roots, (SELECT count(*) FROM tree)::int AS runs`,
      [tenantId, maxRoots, maxRuns],
    );
    const row = r.rows[0];
    return { roots: row?.roots ?? 0, runs: row?.roots ? row.runs : 0 };
  }
}
