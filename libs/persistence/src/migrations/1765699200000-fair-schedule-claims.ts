import type { MigrationInterface, QueryRunner } from 'typeorm';

const CLAIM = 'weft_claim_due_schedules(timestamptz, int, timestamptz)';

/**
 * The candidates and the full condition of a schedule with work, as the schedules migration
 * defines them. Each candidate's row is read by its primary key (the `LIMIT 1` of a key look-up
 * keeps the planner from turning it into a scan of every schedule), and the condition, with its
 * look-ups of backfills and runs, is checked on the candidates only (`MATERIALIZED`).
 */
const ELIGIBLE = `
  candidates AS (
    SELECT s.tenant_id, s.id FROM public.schedules s
     WHERE NOT s.paused AND s.next_due_at IS NOT NULL AND s.next_due_at <= COALESCE(p_now, now())
    UNION
    SELECT s.tenant_id, s.id FROM public.schedules s WHERE cardinality(s.buffered_times) > 0
    UNION
    SELECT b.tenant_id, b.schedule_id FROM public.schedule_backfills b WHERE b.finished_at IS NULL
  ),
  joined AS MATERIALIZED (
    SELECT s.* FROM candidates c
     CROSS JOIN LATERAL (
       SELECT s.tenant_id, s.id, s.paused, s.claimed_until, s.next_due_at, s.buffered_times, s.overlap_policy
         FROM public.schedules s WHERE s.tenant_id = c.tenant_id AND s.id = c.id LIMIT 1
     ) s
  ),
  eligible AS (
    SELECT s.tenant_id, s.id, s.next_due_at FROM joined s
     WHERE NOT s.paused
       AND (s.claimed_until IS NULL OR s.claimed_until <= COALESCE(p_now, now()))
       AND (s.next_due_at <= COALESCE(p_now, now())
            OR ((cardinality(s.buffered_times) > 0
                 OR EXISTS (SELECT 1 FROM public.schedule_backfills b
                             WHERE b.tenant_id = s.tenant_id AND b.schedule_id = s.id AND b.finished_at IS NULL))
                AND (s.overlap_policy IN ('skip', 'cancel_other', 'allow_all')
                     OR NOT EXISTS (SELECT 1 FROM public.runs r
                                     WHERE r.tenant_id = s.tenant_id AND r.schedule_id = s.id AND r.status = 'RUNNING'))))
  )`;

/**
 * Fair schedule claims: `weft_claim_due_schedules` takes the schedules with work round-robin by
 * tenant, so one tenant's many due schedules cannot push another tenant's past its fire time.
 *
 * Each tenant's schedules with work are numbered by due time (`turn`: 1 for its earliest, 2 for
 * the next…); a claim takes up to `limit` of them by turn, then due time — every tenant's first
 * before any tenant's second. A window function cannot sit beside `FOR UPDATE`, so the choice is
 * made first and the chosen rows are then locked (`SKIP LOCKED`), their claim condition checked
 * again under the lock (another replica may have claimed one since). The candidates still come
 * through the three partial indexes of the schedules migration. The function also returns each
 * schedule's `turn`, for the caller to fire them in that order. JIT compilation is off for it: the
 * planner's estimate of the candidates can pass `jit_above_cost`, and compiling then costs
 * hundreds of milliseconds a poll for a query that runs in a few.
 */
export class FairScheduleClaims1765699200000 implements MigrationInterface {
  name = 'FairScheduleClaims1765699200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION ${CLAIM};
      CREATE FUNCTION weft_claim_due_schedules(p_now timestamptz, p_limit int, p_lease_until timestamptz)
        RETURNS TABLE (tenant_id uuid, schedule_id uuid, due_at timestamptz, claimed_at timestamptz, turn bigint)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp SET jit = off
        AS $$
          WITH ${ELIGIBLE},
          chosen AS (
            SELECT e.tenant_id, e.id, e.next_due_at,
                   row_number() OVER (PARTITION BY e.tenant_id ORDER BY e.next_due_at NULLS LAST, e.id) AS turn
              FROM eligible e
             ORDER BY turn, e.next_due_at NULLS LAST, e.tenant_id, e.id
             LIMIT p_limit
          ),
          locked AS (
            SELECT s.tenant_id, s.id, ch.next_due_at, ch.turn FROM public.schedules s
              JOIN chosen ch ON ch.tenant_id = s.tenant_id AND ch.id = s.id
             WHERE NOT s.paused AND (s.claimed_until IS NULL OR s.claimed_until <= COALESCE(p_now, now()))
             FOR UPDATE OF s SKIP LOCKED
          )
          UPDATE public.schedules s SET claimed_until = p_lease_until
            FROM locked WHERE s.tenant_id = locked.tenant_id AND s.id = locked.id
          RETURNING s.tenant_id, s.id, locked.next_due_at, COALESCE(p_now, now()), locked.turn
        $$;
      ALTER FUNCTION ${CLAIM} OWNER TO weft_claimer;
      REVOKE ALL ON FUNCTION ${CLAIM} FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION ${CLAIM} TO weft_app;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION ${CLAIM};
      CREATE FUNCTION weft_claim_due_schedules(p_now timestamptz, p_limit int, p_lease_until timestamptz)
        RETURNS TABLE (tenant_id uuid, schedule_id uuid, due_at timestamptz, claimed_at timestamptz)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH ${ELIGIBLE},
          due AS (
            SELECT s.tenant_id, s.id, s.next_due_at FROM public.schedules s
              JOIN eligible e ON e.tenant_id = s.tenant_id AND e.id = s.id
             ORDER BY s.next_due_at NULLS LAST
             LIMIT p_limit
             FOR UPDATE OF s SKIP LOCKED
          )
          UPDATE public.schedules s SET claimed_until = p_lease_until
            FROM due WHERE s.tenant_id = due.tenant_id AND s.id = due.id
          RETURNING s.tenant_id, s.id, due.next_due_at, COALESCE(p_now, now())
        $$;
      ALTER FUNCTION ${CLAIM} OWNER TO weft_claimer;
      REVOKE ALL ON FUNCTION ${CLAIM} FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION ${CLAIM} TO weft_app;
    `);
  }
}
