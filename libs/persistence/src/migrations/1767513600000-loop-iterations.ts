import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * DO_WHILE loops: a loop's body runs once per iteration, and every iteration's tasks are kept.
 *
 * - `tasks.loop_iteration` (int, NULL): on a body node's task, the 0-based loop iteration it
 *   belongs to; on a DO_WHILE node's own task, the iteration running (or last run), whose input
 *   is then the previous iteration's output (NULL in the first). NULL for every other task.
 * - `tasks.loop_archived` (boolean): true on the tasks of a loop iteration that has ended and
 *   was followed by another. They stay readable (API, history, attempt logs) but are no longer
 *   part of the run's state, so the unique (run, node) and (run, node, iteration) indexes now
 *   cover only the tasks not archived.
 */
export class LoopIterations1767513600000 implements MigrationInterface {
  name = 'LoopIterations1767513600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tasks ADD COLUMN loop_iteration int CHECK (loop_iteration >= 0),
                        ADD COLUMN loop_archived boolean NOT NULL DEFAULT false;
      DROP INDEX tasks_run_node;
      DROP INDEX tasks_run_node_iteration;
      CREATE UNIQUE INDEX tasks_run_node ON tasks (tenant_id, run_id, node_id) WHERE iteration IS NULL AND NOT loop_archived;
      CREATE UNIQUE INDEX tasks_run_node_iteration ON tasks (tenant_id, run_id, node_id, iteration) WHERE iteration IS NOT NULL AND NOT loop_archived;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM tasks WHERE loop_archived;
      DROP INDEX tasks_run_node_iteration;
      DROP INDEX tasks_run_node;
      CREATE UNIQUE INDEX tasks_run_node ON tasks (tenant_id, run_id, node_id) WHERE iteration IS NULL;
      CREATE UNIQUE INDEX tasks_run_node_iteration ON tasks (tenant_id, run_id, node_id, iteration) WHERE iteration IS NOT NULL;
      ALTER TABLE tasks DROP COLUMN loop_archived, DROP COLUMN loop_iteration;
    `);
  }
}
