import type { MigrationInterface, QueryRunner } from 'typeorm';

const CLAIM = 'weft_claim_due_schedules(timestamptz, int, timestamptz)';
const POLICIES = `'skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all'`;

/**
 * Schedules: runs started by the clock.
 *
 * - `schedules (tenant_id, id)`: a tenant table (tenant first in every key, forced row-level
 *   security, `tenant_isolation`). A schedule starts runs of `workflow_id` (at `version` when it
 *   pins one, else the workflow's default) by a cron expression read in `time_zone`, or every
 *   `interval_seconds`, with `input` and `config`, between `start_at` (inclusive) and `end_at`
 *   (exclusive). `next_fire_at` is the next nominal fire time (NULL when none is left),
 *   `next_due_at` the same plus the schedule's deterministic jitter: the scheduler fires it then.
 *   `buffered_times` are the nominal times kept by `buffer_one` / `buffer_all` while a run was
 *   active, oldest first. `claimed_until` is the claim lease of the scheduler working on it.
 *   Counters: `fired_count` and one `skipped_*` column per reason.
 * - `schedule_backfills (tenant_id, id)`: one backfill of a schedule over `[from_time, to_time]`:
 *   `total` nominal times, `started` and `skipped` so far, `next_nominal` the next time to fire
 *   (NULL once `finished_at` is set). Deleted with its schedule.
 * - `runs.schedule_id`, `runs.nominal_time`: the schedule that started a run and the nominal time
 *   it fired for. No reference to `schedules`: a run keeps its schedule's id after the schedule is
 *   deleted. Indexed tenant first for listing a schedule's runs (`runs_schedule`), and over the
 *   RUNNING ones for the overlap check (`runs_schedule_active`).
 * - `weft_claim_due_schedules(now, limit, lease_until)` (SECURITY DEFINER, owned by
 *   `weft_claimer`): claims up to `limit` unpaused schedules with work, skipping rows another
 *   replica holds (`FOR UPDATE SKIP LOCKED`) and those still under another claim. Candidates
 *   come through three partial indexes (due times, buffered fires, unfinished backfills), so a
 *   poll reads the schedules with work, not every schedule. With work means: a fire due
 *   (`next_due_at <= now`), or buffered fires or an unfinished backfill that may proceed (no
 *   RUNNING run of the schedule, or a policy that does not wait for one). Sets `claimed_until`
 *   and returns ids and times only. `weft_claimer` may read those columns of every tenant and
 *   move only `claimed_until`.
 */
export class Schedules1765612800000 implements MigrationInterface {
  name = 'Schedules1765612800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE schedules (
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        id uuid NOT NULL,
        workflow_id text NOT NULL,
        version int,
        cron text,
        interval_seconds int CHECK (interval_seconds >= 1),
        time_zone text NOT NULL DEFAULT 'UTC',
        input jsonb NOT NULL DEFAULT '{}',
        config jsonb NOT NULL DEFAULT '{}',
        start_at timestamptz,
        end_at timestamptz,
        jitter_seconds int NOT NULL DEFAULT 0 CHECK (jitter_seconds >= 0),
        note text,
        overlap_policy text NOT NULL DEFAULT 'skip' CHECK (overlap_policy IN (${POLICIES})),
        catch_up_seconds int NOT NULL DEFAULT 60 CHECK (catch_up_seconds >= 0),
        paused boolean NOT NULL DEFAULT false,
        pause_note text,
        paused_by text,
        paused_at timestamptz,
        next_fire_at timestamptz,
        next_due_at timestamptz,
        buffered_times timestamptz[] NOT NULL DEFAULT '{}',
        claimed_until timestamptz,
        fired_count bigint NOT NULL DEFAULT 0,
        skipped_overlap bigint NOT NULL DEFAULT 0,
        skipped_missed bigint NOT NULL DEFAULT 0,
        skipped_buffer_full bigint NOT NULL DEFAULT 0,
        skipped_start_failed bigint NOT NULL DEFAULT 0,
        skipped_already_fired bigint NOT NULL DEFAULT 0,
        last_nominal_time timestamptz,
        last_fired_at timestamptz,
        last_run_id uuid,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, id),
        FOREIGN KEY (tenant_id, workflow_id) REFERENCES workflows (tenant_id, id) ON DELETE CASCADE,
        FOREIGN KEY (tenant_id, workflow_id, version) REFERENCES workflow_versions (tenant_id, workflow_id, version),
        CHECK ((cron IS NULL) <> (interval_seconds IS NULL)),
        CHECK (end_at IS NULL OR start_at IS NULL OR end_at > start_at)
      );
      CREATE INDEX schedules_due ON schedules (next_due_at) WHERE NOT paused AND next_due_at IS NOT NULL;
      -- The claim's candidates across tenants: schedules holding buffered fires.
      CREATE INDEX schedules_buffered ON schedules (tenant_id, id) WHERE cardinality(buffered_times) > 0;
      CREATE INDEX schedules_workflow ON schedules (tenant_id, workflow_id);

      CREATE TABLE schedule_backfills (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        schedule_id uuid NOT NULL,
        from_time timestamptz NOT NULL,
        to_time timestamptz NOT NULL,
        total int NOT NULL CHECK (total >= 0),
        started int NOT NULL DEFAULT 0,
        skipped int NOT NULL DEFAULT 0,
        next_nominal timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        PRIMARY KEY (tenant_id, id),
        FOREIGN KEY (tenant_id, schedule_id) REFERENCES schedules (tenant_id, id) ON DELETE CASCADE,
        CHECK (to_time >= from_time)
      );
      CREATE INDEX schedule_backfills_open ON schedule_backfills (tenant_id, schedule_id, created_at) WHERE finished_at IS NULL;
      -- The claim's candidates across tenants: the (few) unfinished backfills.
      CREATE INDEX schedule_backfills_unfinished ON schedule_backfills (finished_at) WHERE finished_at IS NULL;
      CREATE INDEX schedule_backfills_schedule ON schedule_backfills (tenant_id, schedule_id, created_at);

      ALTER TABLE runs ADD COLUMN schedule_id uuid, ADD COLUMN nominal_time timestamptz;
      CREATE INDEX runs_schedule ON runs (tenant_id, schedule_id, nominal_time) WHERE schedule_id IS NOT NULL;
      CREATE INDEX runs_schedule_active ON runs (tenant_id, schedule_id) WHERE schedule_id IS NOT NULL AND status = 'RUNNING';
    `);
    for (const table of ['schedules', 'schedule_backfills']) {
      await q.query(`
        ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
        ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
        CREATE POLICY tenant_isolation ON ${table}
          USING (tenant_id = weft_current_tenant())
          WITH CHECK (tenant_id = weft_current_tenant());
        GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO weft_app;
      `);
    }
    await q.query(`
      CREATE POLICY claimer_all_tenants ON schedules FOR ALL TO weft_claimer USING (true) WITH CHECK (true);
      CREATE POLICY claimer_all_tenants ON schedule_backfills FOR SELECT TO weft_claimer USING (true);
      CREATE POLICY claimer_schedule_runs ON runs FOR SELECT TO weft_claimer USING (schedule_id IS NOT NULL);
      GRANT SELECT (tenant_id, id, paused, overlap_policy, next_due_at, buffered_times, claimed_until) ON schedules TO weft_claimer;
      GRANT UPDATE (claimed_until) ON schedules TO weft_claimer;
      GRANT SELECT (tenant_id, schedule_id, finished_at) ON schedule_backfills TO weft_claimer;
      GRANT SELECT (tenant_id, schedule_id, status) ON runs TO weft_claimer;

      CREATE FUNCTION weft_claim_due_schedules(p_now timestamptz, p_limit int, p_lease_until timestamptz)
        RETURNS TABLE (tenant_id uuid, schedule_id uuid, due_at timestamptz, claimed_at timestamptz)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          -- Candidates through three small indexes (due, buffered, open backfills), never a scan
          -- of every schedule; then the full condition on each, under the row lock.
          WITH candidates AS (
            SELECT s.tenant_id, s.id FROM public.schedules s
             WHERE NOT s.paused AND s.next_due_at IS NOT NULL AND s.next_due_at <= COALESCE(p_now, now())
            UNION
            SELECT s.tenant_id, s.id FROM public.schedules s WHERE cardinality(s.buffered_times) > 0
            UNION
            SELECT b.tenant_id, b.schedule_id FROM public.schedule_backfills b WHERE b.finished_at IS NULL
          ),
          due AS (
            SELECT s.tenant_id, s.id, s.next_due_at FROM public.schedules s
              JOIN candidates c ON c.tenant_id = s.tenant_id AND c.id = s.id
             WHERE NOT s.paused
               AND (s.claimed_until IS NULL OR s.claimed_until <= COALESCE(p_now, now()))
               AND (s.next_due_at <= COALESCE(p_now, now())
                    OR ((cardinality(s.buffered_times) > 0
                         OR EXISTS (SELECT 1 FROM public.schedule_backfills b
                                     WHERE b.tenant_id = s.tenant_id AND b.schedule_id = s.id AND b.finished_at IS NULL))
                        AND (s.overlap_policy IN ('skip', 'cancel_other', 'allow_all')
                             OR NOT EXISTS (SELECT 1 FROM public.runs r
                                             WHERE r.tenant_id = s.tenant_id AND r.schedule_id = s.id AND r.status = 'RUNNING'))))
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

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION ${CLAIM};
      DROP POLICY claimer_schedule_runs ON runs;
      REVOKE SELECT (tenant_id, schedule_id, status) ON runs FROM weft_claimer;
      DROP INDEX runs_schedule_active;
      DROP INDEX runs_schedule;
      ALTER TABLE runs DROP COLUMN schedule_id, DROP COLUMN nominal_time;
      DROP TABLE schedule_backfills;
      DROP TABLE schedules;
    `);
  }
}
