import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `task_attempt_logs`: what one worker attempt of a task printed or did, one row per attempt that
 * has any (a CODE attempt's stdout and stderr, an HTTP attempt's request line). `attempt` counts
 * from 0, as `tasks.attempt` and the API's `Task.attempt` do. `logs` is the text as the worker
 * kept it: at most 64 KiB of output, its tail, after a marker line saying how many bytes were cut;
 * a sensitive node's resolved values already replaced. `started_at`/`finished_at` are the worker's
 * clock around the execution; `error` the attempt's failure as reported (NULL when it succeeded).
 *
 * An attempt without output has no row: a step that prints nothing writes nothing more. The rows
 * go with their task (a retry from a node deletes its tasks, and their logs with them).
 */
export class AttemptLogs1766217600000 implements MigrationInterface {
  name = 'AttemptLogs1766217600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE task_attempt_logs (
        tenant_id uuid NOT NULL,
        task_id uuid NOT NULL,
        attempt int NOT NULL,
        run_id uuid NOT NULL,
        node_id text NOT NULL,
        started_at timestamptz NOT NULL,
        finished_at timestamptz NOT NULL,
        error text,
        logs text NOT NULL,
        PRIMARY KEY (tenant_id, task_id, attempt),
        FOREIGN KEY (tenant_id, task_id) REFERENCES tasks (tenant_id, id) ON DELETE CASCADE
      );
      CREATE INDEX task_attempt_logs_by_run ON task_attempt_logs (tenant_id, run_id, finished_at);
      ALTER TABLE task_attempt_logs ENABLE ROW LEVEL SECURITY;
      ALTER TABLE task_attempt_logs FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant_isolation ON task_attempt_logs
        USING (tenant_id = weft_current_tenant())
        WITH CHECK (tenant_id = weft_current_tenant());
      GRANT SELECT, INSERT, UPDATE, DELETE ON task_attempt_logs TO weft_app;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE task_attempt_logs`);
  }
}
