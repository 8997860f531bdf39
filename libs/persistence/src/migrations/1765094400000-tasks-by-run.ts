import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An index for "every task of a run": `tasks_run (tenant_id, run_id)`.
 *
 * Since `1764921600000-iterations-and-child-runs.ts` the two unique indexes that start with
 * `(tenant_id, run_id)` are partial (`iteration IS NULL` / `IS NOT NULL`), so a query over all of
 * a run's tasks — the coordinator's task read when it holds no snapshot of the run (the first
 * event of a run in a process), CancelTasks, a retry's reset, a run's `tasks` in the API — can
 * use neither and, without this index, scans every task of the table (24 ms at 200,000 tasks,
 * growing with it).
 */
export class TasksByRun1765094400000 implements MigrationInterface {
  name = 'TasksByRun1765094400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS tasks_run ON tasks (tenant_id, run_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX tasks_run`);
  }
}
