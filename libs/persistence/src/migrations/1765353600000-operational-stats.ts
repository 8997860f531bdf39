import type { MigrationInterface, QueryRunner } from 'typeorm';

const DUE_TIMERS = 'weft_claim_due_timers(timestamptz, int, timestamptz)';
const STATS = ['weft_queue_stats(timestamptz)', 'weft_outbox_stats()'];

/** The claim of due timers, returning the columns `returns` names (`due` selects the extra ones for `returning`). */
function dueTimers(returns: string, due: string, returning: string): string {
  return `
    CREATE FUNCTION weft_claim_due_timers(p_now timestamptz, p_limit int, p_lease_until timestamptz)
      RETURNS TABLE (${returns})
      LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
      AS $$
        WITH due AS (
          SELECT t.tenant_id, t.id${due} FROM public.tasks t
           WHERE t.status = 'WAITING' AND t.wake_at <= COALESCE(p_now, now())
           ORDER BY t.wake_at
           LIMIT p_limit
           FOR UPDATE SKIP LOCKED
        )
        UPDATE public.tasks t SET wake_at = COALESCE(p_lease_until, COALESCE(p_now, now()) + interval '60 seconds')
          FROM due WHERE t.tenant_id = due.tenant_id AND t.id = due.id
        RETURNING ${returning}
      $$`;
}

/**
 * What operators read across tenants, as SECURITY DEFINER functions owned by `weft_claimer` (which
 * already reads these columns of every tenant) and executable by the runtime role; they return
 * counts and times per queue, never a tenant's ids or data.
 *
 * - `weft_claim_due_timers` also returns `due_at`, the `wake_at` a timer was due at before its
 *   claim moved it, and `claimed_at`, the claim's now, so the scheduler can tell how late it fired.
 * - `weft_queue_stats(now)`: per queue, the active worker tasks (PENDING, QUEUED, RUNNING with a
 *   queue): `backlog` (not running, due: their attempt's `not_before` passed), `delayed` (not
 *   running, not due yet: a retry's backoff), `running`, and `oldest_wait_ms` (how long the
 *   longest-waiting due one has been due; NULL without backlog). NULL `now` is the database's.
 * - `weft_outbox_stats()`: outbox rows committed and not yet enqueued, and the oldest's age in
 *   milliseconds (NULL when there is none).
 */
export class OperationalStats1765353600000 implements MigrationInterface {
  name = 'OperationalStats1765353600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION ${DUE_TIMERS}`);
    await q.query(
      dueTimers(
        'tenant_id uuid, task_id uuid, run_id uuid, node_id text, due_at timestamptz, claimed_at timestamptz',
        ', t.wake_at',
        't.tenant_id, t.id, t.run_id, t.node_id, due.wake_at, COALESCE(p_now, now())',
      ),
    );
    await q.query(`
      CREATE FUNCTION weft_queue_stats(p_now timestamptz)
        RETURNS TABLE (queue text, backlog bigint, delayed bigint, running bigint, oldest_wait_ms double precision)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          SELECT t.queue,
                 count(*) FILTER (WHERE t.status <> 'RUNNING' AND COALESCE(o.not_before, t.updated_at) <= COALESCE(p_now, now())),
                 count(*) FILTER (WHERE t.status <> 'RUNNING' AND COALESCE(o.not_before, t.updated_at) > COALESCE(p_now, now())),
                 count(*) FILTER (WHERE t.status = 'RUNNING'),
                 1000 * EXTRACT(EPOCH FROM COALESCE(p_now, now()) - min(GREATEST(t.updated_at, COALESCE(o.not_before, t.updated_at)))
                   FILTER (WHERE t.status <> 'RUNNING' AND COALESCE(o.not_before, t.updated_at) <= COALESCE(p_now, now())))::double precision
            FROM public.tasks t
            LEFT JOIN public.outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id AND o.attempt = t.attempt
           WHERE t.status IN ('PENDING', 'QUEUED', 'RUNNING') AND t.queue IS NOT NULL
           GROUP BY t.queue
        $$;

      CREATE FUNCTION weft_outbox_stats()
        RETURNS TABLE (unsent bigint, oldest_age_ms double precision)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          SELECT count(*), (1000 * EXTRACT(EPOCH FROM now() - min(o.created_at)))::double precision
            FROM public.outbox o WHERE o.enqueued_at IS NULL
        $$;
    `);
    for (const fn of [DUE_TIMERS, ...STATS]) await grant(q, fn);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const fn of STATS) await q.query(`DROP FUNCTION ${fn}`);
    await q.query(`DROP FUNCTION ${DUE_TIMERS}`);
    await q.query(dueTimers('tenant_id uuid, task_id uuid, run_id uuid, node_id text', '', 't.tenant_id, t.id, t.run_id, t.node_id'));
    await grant(q, DUE_TIMERS);
  }
}

async function grant(q: QueryRunner, fn: string): Promise<void> {
  await q.query(`
    ALTER FUNCTION ${fn} OWNER TO weft_claimer;
    REVOKE ALL ON FUNCTION ${fn} FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION ${fn} TO weft_app;
  `);
}
