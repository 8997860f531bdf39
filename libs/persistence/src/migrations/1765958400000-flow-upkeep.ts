import type { MigrationInterface, QueryRunner } from 'typeorm';

const PRUNE_GROUPS = 'weft_prune_concurrency_groups(timestamptz, int)';

/**
 * Upkeep of flow control's rows.
 *
 * - A schedule's overlap policy counts its QUEUED runs (waiting for a slot of their concurrency
 *   key) as active, as it counts its RUNNING ones: `runs_schedule_queued` finds them as
 *   `runs_schedule_active` finds the RUNNING ones.
 * - A concurrency group's row outlives its runs only for a while: `weft_prune_concurrency_groups`
 *   deletes, at most `p_max` at a time, the groups admitted to last before `p_before` that have no
 *   RUNNING or QUEUED run. A group locked by an admission under way is skipped (its admission
 *   writes `updated_at` anyway); a later start of the key creates its row again.
 */
export class FlowUpkeep1765958400000 implements MigrationInterface {
  name = 'FlowUpkeep1765958400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX runs_schedule_queued ON runs (tenant_id, schedule_id) WHERE schedule_id IS NOT NULL AND status = 'QUEUED';
      CREATE INDEX concurrency_groups_age ON concurrency_groups (updated_at);
      CREATE FUNCTION ${PRUNE_GROUPS.replace('(timestamptz, int)', '(p_before timestamptz, p_max int)')} RETURNS int
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH idle AS (
            SELECT g.tenant_id, g.group_key FROM public.concurrency_groups g
             WHERE g.updated_at < p_before
               AND NOT EXISTS (SELECT 1 FROM public.runs r WHERE r.tenant_id = g.tenant_id AND r.concurrency_group = g.group_key AND r.status IN ('RUNNING', 'QUEUED'))
             ORDER BY g.updated_at
             LIMIT p_max
             FOR UPDATE SKIP LOCKED
          ), d AS (
            DELETE FROM public.concurrency_groups g USING idle
             WHERE g.tenant_id = idle.tenant_id AND g.group_key = idle.group_key AND g.updated_at < p_before
            RETURNING 1
          )
          SELECT count(*)::int FROM d
        $$;
      ALTER FUNCTION ${PRUNE_GROUPS} OWNER TO weft_claimer;
      REVOKE ALL ON FUNCTION ${PRUNE_GROUPS} FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION ${PRUNE_GROUPS} TO weft_app;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION ${PRUNE_GROUPS};
      DROP INDEX concurrency_groups_age;
      DROP INDEX runs_schedule_queued;
    `);
  }
}
