import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The SECURITY DEFINER claim functions this migration (re)defines, by signature. */
const CLAIMS = [
  'weft_claim_due_timers(timestamptz, int, timestamptz)',
  'weft_claim_outbox(timestamptz, timestamptz, int, timestamptz)',
  'weft_claim_lost_tasks(timestamptz, int, timestamptz)',
];

/**
 * Task leases in PostgreSQL.
 *
 * - `tasks.lease_expires_at` (timestamptz): until when the dispatched attempt of a worker task
 *   is accounted for. Writing a DispatchTask/RetryTask sets it to `not_before` + the dispatch
 *   lease; a worker's claim (`markRunning`) and its heartbeats to the database's now + the run
 *   lease. An active worker task (PENDING/QUEUED/RUNNING with a queue) past it is "lost" unless
 *   its Bull job is still live.
 * - `tasks.lease_token` (uuid): the token of the worker execution that claimed the current
 *   attempt; reports carry it and a report with another token is ignored (fencing). NULL until
 *   claimed, and again after the attempt is re-dispatched.
 * - Index `tasks_worker_leases (lease_expires_at)` over the active worker tasks replaces
 *   `tasks_active_workers (updated_at)`: the lease, not the time of a task's last change, decides
 *   when a task is lost.
 * - `weft_claim_lost_tasks(now, limit, lease_until)` is replaced (same name, new body and
 *   result): it claims active worker tasks whose lease expired at `now` by moving the lease to
 *   `lease_until`, and returns (tenant, task, run, attempt) ids. `weft_claimer` is granted reading and
 *   moving `tasks.lease_expires_at`, and its right to move `outbox.enqueued_at` is revoked.
 * - The three claim functions take a NULL `now` as the database's `now()` (and a NULL lease end
 *   as `now()` + a default), so production callers never pass a process clock reading.
 *
 * Existing active worker tasks get a lease ending at their `not_before` (or now) + 30 s, so the
 * first sweep after the upgrade checks their jobs.
 */
export class TaskLeases1764835200000 implements MigrationInterface {
  name = 'TaskLeases1764835200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tasks ADD COLUMN lease_token uuid, ADD COLUMN lease_expires_at timestamptz;

      UPDATE tasks t
         SET lease_expires_at = interval '30 seconds' + GREATEST(now(), (
               SELECT o.not_before FROM outbox o WHERE o.tenant_id = t.tenant_id AND o.task_id = t.id AND o.attempt = t.attempt))
       WHERE t.status IN ('PENDING', 'QUEUED', 'RUNNING') AND t.queue IS NOT NULL;

      DROP INDEX tasks_active_workers;
      CREATE INDEX tasks_worker_leases ON tasks (lease_expires_at)
        WHERE status IN ('PENDING', 'QUEUED', 'RUNNING') AND queue IS NOT NULL;

      GRANT SELECT (lease_expires_at) ON tasks TO weft_claimer;
      GRANT UPDATE (lease_expires_at) ON tasks TO weft_claimer;
      REVOKE UPDATE (enqueued_at) ON outbox FROM weft_claimer;

      -- Due timers: as before, with NULL p_now meaning the database's now() and a NULL lease end
      -- meaning 60 s after it.
      CREATE OR REPLACE FUNCTION weft_claim_due_timers(p_now timestamptz, p_limit int, p_lease_until timestamptz)
        RETURNS TABLE (tenant_id uuid, task_id uuid, run_id uuid, node_id text)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH due AS (
            SELECT t.tenant_id, t.id FROM public.tasks t
             WHERE t.status = 'WAITING' AND t.wake_at <= COALESCE(p_now, now())
             ORDER BY t.wake_at
             LIMIT p_limit
             FOR UPDATE SKIP LOCKED
          )
          UPDATE public.tasks t SET wake_at = COALESCE(p_lease_until, COALESCE(p_now, now()) + interval '60 seconds')
            FROM due WHERE t.tenant_id = due.tenant_id AND t.id = due.id
          RETURNING t.tenant_id, t.id, t.run_id, t.node_id
        $$;

      -- Outbox rows: as before, with NULL p_now meaning the database's now() (the caller passes
      -- the cut-offs computed from the same now()).
      CREATE OR REPLACE FUNCTION weft_claim_outbox(p_created_before timestamptz, p_claimed_before timestamptz, p_limit int, p_now timestamptz)
        RETURNS TABLE (outbox_id bigint, tenant_id uuid, task_id uuid, attempt int)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH due AS (
            SELECT o.id FROM public.outbox o
             WHERE o.enqueued_at IS NULL AND o.created_at <= p_created_before
               AND (o.claimed_at IS NULL OR o.claimed_at <= p_claimed_before)
             ORDER BY o.created_at, o.id
             LIMIT p_limit
             FOR UPDATE SKIP LOCKED
          )
          UPDATE public.outbox o SET claimed_at = COALESCE(p_now, now())
            FROM due WHERE o.id = due.id
          RETURNING o.id, o.tenant_id, o.task_id, o.attempt
        $$;

      -- Active worker tasks whose lease expired: claimed by moving the lease to p_lease_until
      -- (default 30 s after now), which hides them from other scheduler replicas meanwhile.
      DROP FUNCTION weft_claim_lost_tasks(timestamptz, int, timestamptz);
      CREATE FUNCTION weft_claim_lost_tasks(p_now timestamptz, p_limit int, p_lease_until timestamptz)
        RETURNS TABLE (tenant_id uuid, task_id uuid, run_id uuid, attempt int)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH lost AS (
            SELECT t.tenant_id, t.id FROM public.tasks t
             WHERE t.status IN ('PENDING', 'QUEUED', 'RUNNING') AND t.queue IS NOT NULL
               AND t.lease_expires_at <= COALESCE(p_now, now())
             ORDER BY t.lease_expires_at
             LIMIT p_limit
             FOR UPDATE SKIP LOCKED
          )
          UPDATE public.tasks t SET lease_expires_at = COALESCE(p_lease_until, COALESCE(p_now, now()) + interval '30 seconds')
            FROM lost WHERE t.tenant_id = lost.tenant_id AND t.id = lost.id
          RETURNING t.tenant_id, t.id, t.run_id, t.attempt
        $$;
    `);
    for (const fn of CLAIMS) {
      await q.query(`
        ALTER FUNCTION ${fn} OWNER TO weft_claimer;
        REVOKE ALL ON FUNCTION ${fn} FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION ${fn} TO weft_app;
      `);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION weft_claim_lost_tasks(timestamptz, int, timestamptz);
      CREATE FUNCTION weft_claim_lost_tasks(p_cutoff timestamptz, p_limit int, p_now timestamptz)
        RETURNS TABLE (outbox_id bigint, tenant_id uuid, task_id uuid, attempt int)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH lost AS (
            SELECT o.id FROM public.tasks t
              JOIN public.outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id AND o.attempt = t.attempt
             WHERE t.status IN ('PENDING', 'QUEUED', 'RUNNING') AND t.queue IS NOT NULL
               AND t.updated_at <= p_cutoff AND o.enqueued_at <= p_cutoff AND o.not_before <= p_cutoff
             ORDER BY t.updated_at, o.id
             LIMIT p_limit
             FOR UPDATE OF o SKIP LOCKED
          )
          UPDATE public.outbox o SET enqueued_at = p_now
            FROM lost WHERE o.id = lost.id
          RETURNING o.id, o.tenant_id, o.task_id, o.attempt
        $$;

      CREATE OR REPLACE FUNCTION weft_claim_due_timers(p_now timestamptz, p_limit int, p_lease_until timestamptz)
        RETURNS TABLE (tenant_id uuid, task_id uuid, run_id uuid, node_id text)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH due AS (
            SELECT t.tenant_id, t.id FROM public.tasks t
             WHERE t.status = 'WAITING' AND t.wake_at <= p_now
             ORDER BY t.wake_at
             LIMIT p_limit
             FOR UPDATE SKIP LOCKED
          )
          UPDATE public.tasks t SET wake_at = p_lease_until
            FROM due WHERE t.tenant_id = due.tenant_id AND t.id = due.id
          RETURNING t.tenant_id, t.id, t.run_id, t.node_id
        $$;

      CREATE OR REPLACE FUNCTION weft_claim_outbox(p_created_before timestamptz, p_claimed_before timestamptz, p_limit int, p_now timestamptz)
        RETURNS TABLE (outbox_id bigint, tenant_id uuid, task_id uuid, attempt int)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH due AS (
            SELECT o.id FROM public.outbox o
             WHERE o.enqueued_at IS NULL AND o.created_at <= p_created_before
               AND (o.claimed_at IS NULL OR o.claimed_at <= p_claimed_before)
             ORDER BY o.created_at, o.id
             LIMIT p_limit
             FOR UPDATE SKIP LOCKED
          )
          UPDATE public.outbox o SET claimed_at = p_now
            FROM due WHERE o.id = due.id
          RETURNING o.id, o.tenant_id, o.task_id, o.attempt
        $$;

      GRANT UPDATE (enqueued_at) ON outbox TO weft_claimer;
      REVOKE UPDATE (lease_expires_at), SELECT (lease_expires_at) ON tasks FROM weft_claimer;

      DROP INDEX tasks_worker_leases;
      CREATE INDEX tasks_active_workers ON tasks (updated_at)
        WHERE status IN ('PENDING', 'QUEUED', 'RUNNING') AND queue IS NOT NULL;

      ALTER TABLE tasks DROP COLUMN lease_expires_at, DROP COLUMN lease_token;
    `);
    for (const fn of CLAIMS) {
      await q.query(`
        ALTER FUNCTION ${fn} OWNER TO weft_claimer;
        REVOKE ALL ON FUNCTION ${fn} FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION ${fn} TO weft_app;
      `);
    }
  }
}
