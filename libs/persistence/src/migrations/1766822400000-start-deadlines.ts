import type { MigrationInterface, QueryRunner } from 'typeorm';

const CLAIM = 'weft_claim_start_deadlines(timestamptz, int, timestamptz)';

/**
 * Schedule-to-start deadlines (a node's `schedule_to_start_seconds`).
 *
 * - `outbox.start_by`: when the backlog row's attempt fails unless a worker started it; NULL
 *   without a deadline. Only rows of nodes with the setting carry one.
 * - `outbox_start_by`: those rows by deadline.
 * - `weft_claim_start_deadlines(now, limit, lease_until)`: claims up to `limit` rows whose
 *   deadline passed (not those of a paused run, whose clock stands still): a row whose attempt a
 *   worker started meanwhile, or that moved on, loses its deadline; the others are leased until
 *   `lease_until` and returned with their task, for the scheduler to fail the attempt in its
 *   tenant's transaction (a SECURITY DEFINER function owned by `weft_claimer`).
 */
export class StartDeadlines1766822400000 implements MigrationInterface {
  name = 'StartDeadlines1766822400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE outbox ADD COLUMN start_by timestamptz;
      CREATE INDEX outbox_start_by ON outbox (start_by) WHERE start_by IS NOT NULL;
      GRANT SELECT (start_by), UPDATE (start_by) ON outbox TO weft_claimer;
      CREATE FUNCTION ${CLAIM.replace('(timestamptz, int, timestamptz)', '(p_now timestamptz, p_limit int, p_lease_until timestamptz)')}
        RETURNS TABLE (tenant_id uuid, run_id uuid, task_id uuid, node_id text, attempt int, due_at timestamptz)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
      AS $$
        WITH due AS (
          SELECT o.tenant_id, o.id, o.task_id, o.attempt, o.start_by FROM public.outbox o
           WHERE o.start_by IS NOT NULL AND o.start_by <= COALESCE(p_now, now()) AND o.hold_reason IS DISTINCT FROM 'RUN_PAUSED'
           ORDER BY o.start_by
           LIMIT p_limit
           FOR UPDATE SKIP LOCKED
        ), judged AS (
          SELECT d.*, t.run_id, t.node_id, t.id IS NOT NULL AS waiting FROM due d
            LEFT JOIN public.tasks t ON t.tenant_id = d.tenant_id AND t.id = d.task_id AND t.attempt = d.attempt
                                    AND t.status IN ('QUEUED', 'PENDING')
        ), leased AS (
          -- A data-modifying CTE runs whether or not the query reads it.
          UPDATE public.outbox o SET start_by = CASE WHEN j.waiting THEN p_lease_until END
            FROM judged j WHERE o.tenant_id = j.tenant_id AND o.id = j.id
        )
        SELECT j.tenant_id, j.run_id, j.task_id, j.node_id, j.attempt, j.start_by
          FROM judged j WHERE j.waiting
         ORDER BY j.start_by
      $$;
      ALTER FUNCTION ${CLAIM} OWNER TO weft_claimer;
      REVOKE ALL ON FUNCTION ${CLAIM} FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION ${CLAIM} TO weft_app;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION ${CLAIM};
      REVOKE SELECT (start_by), UPDATE (start_by) ON outbox FROM weft_claimer;
      DROP INDEX outbox_start_by;
      ALTER TABLE outbox DROP COLUMN start_by;
    `);
  }
}
