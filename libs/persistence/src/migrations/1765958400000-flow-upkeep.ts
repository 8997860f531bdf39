import type { MigrationInterface, QueryRunner } from 'typeorm';

const PRUNE_GROUPS = 'weft_prune_concurrency_groups(timestamptz, int)';

/** The queues with a backlog row whose status is `cond` (a predicate of `o`), by a skip scan: one index probe per queue. */
const queuesWhere = (name: string, cond: string) => `${name} AS (
    (SELECT o.queue FROM public.outbox o WHERE o.enqueued_at IS NULL AND ${cond} ORDER BY o.queue LIMIT 1)
    UNION ALL
    SELECT (SELECT o.queue FROM public.outbox o WHERE o.enqueued_at IS NULL AND ${cond} AND o.queue > ${name}.queue ORDER BY o.queue LIMIT 1)
      FROM ${name} WHERE ${name}.queue IS NOT NULL
  )`;

/**
 * Upkeep of flow control's rows.
 *
 * - A schedule's overlap policy counts its QUEUED runs (waiting for a slot of their concurrency
 *   key) as active, as it counts its RUNNING ones: `runs_schedule_queued` finds them as
 *   `runs_schedule_active` finds the RUNNING ones.
 * - A workflow-scoped run group's key becomes `workflow:<id>/<key>`: it was `workflow:<id>:<key>`,
 *   and as a workflow id may hold `:` (never `/`), two workflows' groups could be one (`W` with key
 *   `b:c` and `W:b` with key `c`). Each group row and each run is carried over to its own key; a
 *   group two workflows shared becomes one row each, with the shared row's limit.
 * - `weft_backlog_queues`, the scheduler's poll, finds the queues with ready or due backlog rows
 *   by a skip scan of `outbox_ready` and `outbox_held` (one probe per queue, and one for its
 *   earliest hold), not by reading every row waiting: a tenant's pile of a million rows costs the
 *   poll what one row does.
 * - A concurrency group's row outlives its runs only for a while: `weft_prune_concurrency_groups`
 *   deletes, at most `p_max` at a time, the groups admitted to last before `p_before` that have no
 *   RUNNING or QUEUED run. A group locked by an admission under way is skipped (its admission
 *   writes `updated_at` anyway); a later start of the key creates its row again.
 */
export class FlowUpkeep1765958400000 implements MigrationInterface {
  name = 'FlowUpkeep1765958400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO concurrency_groups (tenant_id, group_key, scope, workflow_id, key, run_limit, updated_at)
        SELECT g.tenant_id, 'workflow:' || g.workflow_id || '/' || g.key, g.scope, g.workflow_id, g.key, g.run_limit, g.updated_at
          FROM concurrency_groups g WHERE g.scope = 'workflow'
        ON CONFLICT (tenant_id, group_key) DO NOTHING;
      INSERT INTO concurrency_groups (tenant_id, group_key, scope, workflow_id, key, run_limit, updated_at)
        SELECT DISTINCT ON (r.tenant_id, r.workflow_id, r.concurrency_key)
               r.tenant_id, 'workflow:' || r.workflow_id || '/' || r.concurrency_key, 'workflow', r.workflow_id, r.concurrency_key, g.run_limit, g.updated_at
          FROM runs r JOIN concurrency_groups g ON g.tenant_id = r.tenant_id AND g.group_key = r.concurrency_group
         WHERE r.concurrency_group = 'workflow:' || r.workflow_id || ':' || r.concurrency_key
        ON CONFLICT (tenant_id, group_key) DO NOTHING;
      UPDATE runs SET concurrency_group = 'workflow:' || workflow_id || '/' || concurrency_key
       WHERE concurrency_group = 'workflow:' || workflow_id || ':' || concurrency_key;
      DELETE FROM concurrency_groups WHERE scope = 'workflow' AND group_key <> 'workflow:' || workflow_id || '/' || key;

      CREATE OR REPLACE FUNCTION weft_backlog_queues(p_now timestamptz) RETURNS TABLE (queue text)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH RECURSIVE ${queuesWhere('ready', 'o.hold_reason IS NULL')}, ${queuesWhere('held', 'o.hold_reason IS NOT NULL')}
          SELECT r.queue FROM ready r WHERE r.queue IS NOT NULL
          UNION
          SELECT h.queue FROM held h
           WHERE h.queue IS NOT NULL
             AND EXISTS (SELECT 1 FROM public.outbox o
                          WHERE o.queue = h.queue AND o.enqueued_at IS NULL AND o.hold_reason IS NOT NULL AND o.held_until <= COALESCE(p_now, now()))
        $$;

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
      CREATE OR REPLACE FUNCTION weft_backlog_queues(p_now timestamptz) RETURNS TABLE (queue text)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          SELECT DISTINCT o.queue FROM public.outbox o
           WHERE o.enqueued_at IS NULL AND (o.hold_reason IS NULL OR o.held_until <= COALESCE(p_now, now()))
        $$;
      DROP INDEX concurrency_groups_age;
      DROP INDEX runs_schedule_queued;
      INSERT INTO concurrency_groups (tenant_id, group_key, scope, workflow_id, key, run_limit, updated_at)
        SELECT g.tenant_id, 'workflow:' || g.workflow_id || ':' || g.key, g.scope, g.workflow_id, g.key, g.run_limit, g.updated_at
          FROM concurrency_groups g WHERE g.scope = 'workflow'
        ON CONFLICT (tenant_id, group_key) DO NOTHING;
      UPDATE runs SET concurrency_group = 'workflow:' || workflow_id || ':' || concurrency_key
       WHERE concurrency_group = 'workflow:' || workflow_id || '/' || concurrency_key;
      DELETE FROM concurrency_groups WHERE scope = 'workflow' AND group_key <> 'workflow:' || workflow_id || ':' || key;
    `);
  }
}
