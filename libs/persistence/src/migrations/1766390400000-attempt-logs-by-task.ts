import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops `task_attempt_logs_by_run`: attempt logs are read by task (the primary key's prefix, for
 * a run's tasks and for the cascade from a deleted task), never by run, and every HTTP step
 * writes a row, so an index nobody reads cost each step an index insert. `down` builds it again.
 */
export class AttemptLogsByTask1766390400000 implements MigrationInterface {
  name = 'AttemptLogsByTask1766390400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX task_attempt_logs_by_run`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX task_attempt_logs_by_run ON task_attempt_logs (tenant_id, run_id, finished_at)`);
  }
}
