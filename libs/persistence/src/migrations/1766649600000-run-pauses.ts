import type { MigrationInterface, QueryRunner } from 'typeorm';

const HOLDS = `'BACKOFF', 'CONCURRENCY_LIMIT', 'RATE_LIMIT'`;

/**
 * Pausing runs.
 *
 * - `runs.paused_at`, `runs.pause_reason`: set while the run is paused. A paused run keeps
 *   `status` RUNNING in the table, so everything that counts a run as active (its concurrency
 *   slot, its schedule's overlap policy, the cancellation of child runs) counts it as before; the
 *   API reports it as PAUSED.
 * - `outbox.hold_reason` `RUN_PAUSED`: a backlog row of a paused run, with no `held_until`: fair
 *   dispatch never admits it, and only the resume releases it (as a `BACKOFF` hold while the
 *   attempt's backoff still runs).
 * - `tasks.attempt_limit`: the attempts a task may make in all once a resume granted its node
 *   (`on_exhausted: pause`) more than its `max_attempts`; NULL for the node's own policy.
 */
export class RunPauses1766649600000 implements MigrationInterface {
  name = 'RunPauses1766649600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE runs ADD COLUMN paused_at timestamptz, ADD COLUMN pause_reason text;
      ALTER TABLE tasks ADD COLUMN attempt_limit integer CONSTRAINT tasks_attempt_limit_check CHECK (attempt_limit >= 1);
      ALTER TABLE outbox DROP CONSTRAINT outbox_hold_reason_check,
        ADD CONSTRAINT outbox_hold_reason_check CHECK (hold_reason IN (${HOLDS}, 'RUN_PAUSED'));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE outbox SET hold_reason = NULL, hold_detail = NULL, held_until = NULL WHERE hold_reason = 'RUN_PAUSED';
      ALTER TABLE outbox DROP CONSTRAINT outbox_hold_reason_check, ADD CONSTRAINT outbox_hold_reason_check CHECK (hold_reason IN (${HOLDS}));
      ALTER TABLE tasks DROP COLUMN attempt_limit;
      ALTER TABLE runs DROP COLUMN pause_reason, DROP COLUMN paused_at;
    `);
  }
}
