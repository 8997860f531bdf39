import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Dynamic fan-out (`for_each`) and child runs (SUBWORKFLOW) on the DAG.
 *
 * - `tasks.iteration` (int, NULL): the 0-based element index of a `for_each` iteration task. A
 *   `for_each` node has one aggregate task (`iteration` NULL, `queue` NULL: never dispatched,
 *   never leased) holding the node's status and merged output, and one task per element with its
 *   own attempts and lease. The unique (run, node) index now covers the tasks without an
 *   iteration; iterations are unique per (run, node, iteration).
 * - `runs.parent_run_id`, `parent_task_id`, `parent_attempt`: the SUBWORKFLOW task attempt that
 *   started a child run (same tenant); `runs.depth`: 0 for a run started over the API, the
 *   parent's depth + 1 for a child (the machine refuses to go beyond the depth limit).
 */
export class IterationsAndChildRuns1764921600000 implements MigrationInterface {
  name = 'IterationsAndChildRuns1764921600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tasks ADD COLUMN iteration int CHECK (iteration >= 0);
      DROP INDEX tasks_run_node;
      CREATE UNIQUE INDEX tasks_run_node ON tasks (tenant_id, run_id, node_id) WHERE iteration IS NULL;
      CREATE UNIQUE INDEX tasks_run_node_iteration ON tasks (tenant_id, run_id, node_id, iteration) WHERE iteration IS NOT NULL;

      ALTER TABLE runs
        ADD COLUMN parent_run_id uuid,
        ADD COLUMN parent_task_id uuid,
        ADD COLUMN parent_attempt int,
        ADD COLUMN depth int NOT NULL DEFAULT 0 CHECK (depth >= 0),
        ADD CONSTRAINT runs_parent_fk FOREIGN KEY (tenant_id, parent_run_id) REFERENCES runs(tenant_id, id) ON DELETE CASCADE,
        ADD CONSTRAINT runs_parent_complete CHECK ((parent_run_id IS NULL) = (parent_task_id IS NULL) AND (parent_run_id IS NULL) = (parent_attempt IS NULL));
      CREATE INDEX runs_parent ON runs (tenant_id, parent_run_id, created_at) WHERE parent_run_id IS NOT NULL;
      CREATE INDEX runs_parent_task ON runs (tenant_id, parent_task_id, parent_attempt) WHERE parent_task_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX runs_parent_task;
      DROP INDEX runs_parent;
      ALTER TABLE runs DROP CONSTRAINT runs_parent_complete, DROP CONSTRAINT runs_parent_fk,
        DROP COLUMN depth, DROP COLUMN parent_attempt, DROP COLUMN parent_task_id, DROP COLUMN parent_run_id;
      DELETE FROM tasks WHERE iteration IS NOT NULL;
      DROP INDEX tasks_run_node_iteration;
      DROP INDEX tasks_run_node;
      CREATE UNIQUE INDEX tasks_run_node ON tasks (tenant_id, run_id, node_id);
      ALTER TABLE tasks DROP COLUMN iteration;
    `);
  }
}
