import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A run's place in a distributed trace (W3C Trace Context):
 *
 * - `runs.traceparent` (text): the run's own span as a `traceparent` header value
 *   (`00-<trace id>-<span id>-<flags>`). Its task attempts' spans are its children, and HTTP
 *   nodes send it on. NULL for runs created before this migration.
 * - `runs.trace_caller_span` (text): the span the run was started from (the caller's
 *   `traceparent`, or the parent run's span for a child run), the parent of the run's span;
 *   NULL when the run started a trace of its own.
 */
export class RunTraces1765526400000 implements MigrationInterface {
  name = 'RunTraces1765526400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs ADD COLUMN traceparent text, ADD COLUMN trace_caller_span text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs DROP COLUMN traceparent, DROP COLUMN trace_caller_span`);
  }
}
