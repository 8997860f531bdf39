import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bounds on SUBWORKFLOW child runs, in a migration of their own so that a database already
 * migrated past `1764921600000-iterations-and-child-runs.ts` gets them too:
 *
 * - `runs.root_run_id` (uuid, NULL): for a child run, the run at the top of its tree (NULL for
 *   that run itself), so the runs of one tree can be counted: the machine caps a tree at
 *   `WEFT_MAX_RUN_TREE` runs. Existing child runs get theirs by walking up their parents. The
 *   check `runs_parent_complete` now also requires it exactly for runs with a parent.
 * - `tasks.retry_at` (timestamptz, NULL): when a WAITING SUBWORKFLOW task whose child failed may
 *   start its next attempt's child (the retry's backoff); unlike `wake_at`, timer claims never
 *   move it, so a late wake-up cannot start the next child early.
 */
export class RunTreesAndChildRetries1765008000000 implements MigrationInterface {
  name = 'RunTreesAndChildRetries1765008000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      -- IF NOT EXISTS: a scratch database migrated by an unreleased draft of 1764921600000 has them.
      ALTER TABLE tasks ADD COLUMN IF NOT EXISTS retry_at timestamptz;
      ALTER TABLE runs ADD COLUMN IF NOT EXISTS root_run_id uuid;
      WITH RECURSIVE tree AS (
        SELECT tenant_id, id, id AS root FROM runs WHERE parent_run_id IS NULL
        UNION ALL
        SELECT r.tenant_id, r.id, tree.root FROM runs r JOIN tree ON r.tenant_id = tree.tenant_id AND r.parent_run_id = tree.id
      )
      UPDATE runs r SET root_run_id = tree.root
        FROM tree WHERE r.tenant_id = tree.tenant_id AND r.id = tree.id AND r.parent_run_id IS NOT NULL;
      ALTER TABLE runs DROP CONSTRAINT runs_parent_complete,
        ADD CONSTRAINT runs_parent_complete CHECK ((parent_run_id IS NULL) = (parent_task_id IS NULL) AND (parent_run_id IS NULL) = (parent_attempt IS NULL)
                                                   AND (parent_run_id IS NULL) = (root_run_id IS NULL));
      CREATE INDEX IF NOT EXISTS runs_root ON runs (tenant_id, root_run_id) WHERE root_run_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX runs_root;
      ALTER TABLE runs DROP CONSTRAINT runs_parent_complete,
        ADD CONSTRAINT runs_parent_complete CHECK ((parent_run_id IS NULL) = (parent_task_id IS NULL) AND (parent_run_id IS NULL) = (parent_attempt IS NULL));
      ALTER TABLE runs DROP COLUMN root_run_id;
      ALTER TABLE tasks DROP COLUMN retry_at;
    `);
  }
}
