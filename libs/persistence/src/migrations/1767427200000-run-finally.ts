import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A definition's `finally` step: the run's decided outcome, kept while the step runs.
 *
 * - `runs.decided_status`, `decided_error`, `decided_output`: the outcome a run will take once its
 *   `finally` step ended (SUCCEEDED, FAILED, CANCELLED or TIMED_OUT, its error, its output on
 *   success), written when the outcome is decided; the run stays RUNNING meanwhile. Cleared when
 *   the run finishes. NULL for a run that is not ending.
 */
export class RunFinally1767427200000 implements MigrationInterface {
  name = 'RunFinally1767427200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE runs ADD COLUMN decided_status text, ADD COLUMN decided_error text, ADD COLUMN decided_output jsonb,
        ADD CONSTRAINT runs_decided_status CHECK (decided_status IN ('SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT'));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs DROP CONSTRAINT runs_decided_status, DROP COLUMN decided_output, DROP COLUMN decided_error, DROP COLUMN decided_status;`);
  }
}
