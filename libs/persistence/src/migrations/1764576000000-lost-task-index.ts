import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Index for the scheduler's sweep of worker tasks whose job vanished
 * (the lost-task sweep, `LostTaskSweep.sweep`): the active worker tasks, oldest change first.
 */
export class LostTaskIndex1764576000000 implements MigrationInterface {
  name = 'LostTaskIndex1764576000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX tasks_active_workers ON tasks (updated_at)
        WHERE status IN ('PENDING', 'QUEUED', 'RUNNING') AND queue IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX tasks_active_workers`);
  }
}
