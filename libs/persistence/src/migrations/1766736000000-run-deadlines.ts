import type { MigrationInterface, QueryRunner } from 'typeorm';

const CLAIM = 'weft_claim_due_deadlines(timestamptz, int, timestamptz)';

/**
 * Run deadlines (a definition's `timeout_seconds`).
 *
 * - `runs.deadline_at`: when the run times out, set by its start and at each retry, on the
 *   database's clock; NULL without a deadline. It is kept once the run ended.
 * - `runs.deadline_lease`: how long a scheduler that claimed the due deadline has to apply it;
 *   another replica skips the run until then, and takes it again should the claimer die.
 * - `runs_deadlines`: the active runs with a deadline, by deadline, so the scheduler finds the
 *   due ones with one index range scan.
 * - `weft_claim_due_deadlines(now, limit, lease_until)`: claims up to `limit` active runs whose
 *   deadline passed (a SECURITY DEFINER function owned by `weft_claimer`, which may read and
 *   lease such rows of every tenant); the time-out itself is applied in each tenant's transaction.
 */
export class RunDeadlines1766736000000 implements MigrationInterface {
  name = 'RunDeadlines1766736000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE runs ADD COLUMN deadline_at timestamptz, ADD COLUMN deadline_lease timestamptz;
      CREATE INDEX runs_deadlines ON runs (deadline_at) WHERE status = 'RUNNING' AND deadline_at IS NOT NULL;
      GRANT SELECT (id, deadline_at, deadline_lease) ON runs TO weft_claimer;
      GRANT UPDATE (deadline_lease) ON runs TO weft_claimer;
      CREATE POLICY claimer_deadline_runs ON runs FOR SELECT TO weft_claimer USING (deadline_at IS NOT NULL);
      CREATE POLICY claimer_deadline_leases ON runs FOR UPDATE TO weft_claimer USING (deadline_at IS NOT NULL) WITH CHECK (deadline_at IS NOT NULL);
      CREATE FUNCTION ${CLAIM.replace('(timestamptz, int, timestamptz)', '(p_now timestamptz, p_limit int, p_lease_until timestamptz)')}
        RETURNS TABLE (tenant_id uuid, run_id uuid, due_at timestamptz, claimed_at timestamptz)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
      AS $$
        WITH due AS (
          SELECT r.tenant_id, r.id, r.deadline_at FROM public.runs r
           WHERE r.status = 'RUNNING' AND r.deadline_at IS NOT NULL AND r.deadline_at <= COALESCE(p_now, now())
             AND (r.deadline_lease IS NULL OR r.deadline_lease <= COALESCE(p_now, now()))
           ORDER BY r.deadline_at
           LIMIT p_limit
           FOR UPDATE SKIP LOCKED
        )
        UPDATE public.runs r SET deadline_lease = p_lease_until
          FROM due WHERE r.tenant_id = due.tenant_id AND r.id = due.id
        RETURNING r.tenant_id, r.id, due.deadline_at, COALESCE(p_now, now())
      $$;
      ALTER FUNCTION ${CLAIM} OWNER TO weft_claimer;
      REVOKE ALL ON FUNCTION ${CLAIM} FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION ${CLAIM} TO weft_app;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION ${CLAIM};
      DROP POLICY claimer_deadline_leases ON runs;
      DROP POLICY claimer_deadline_runs ON runs;
      REVOKE UPDATE (deadline_lease) ON runs FROM weft_claimer;
      REVOKE SELECT (id, deadline_at, deadline_lease) ON runs FROM weft_claimer;
      DROP INDEX runs_deadlines;
      ALTER TABLE runs DROP COLUMN deadline_lease, DROP COLUMN deadline_at;
    `);
  }
}
