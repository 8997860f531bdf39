import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Run labels: string keys to string values set when a run starts, for finding runs by them.
 *
 * - `runs.labels jsonb NOT NULL DEFAULT '{}'`: the run's labels as given, written once by the
 *   run's insert (a child run's stay `{}`) and read back with the run. The API checks the limits
 *   (at most 16, keys `[A-Za-z0-9_.-]{1,64}`, values of at most 256 characters).
 * - `schedules.labels`: the labels a schedule gives every run it starts.
 * - `run_labels (tenant_id, key, value, run_id)`: one row per label of a run, written by the same
 *   statement as the run's insert; the index runs are found by. A filter asks, per label, for a
 *   row with that key and value: the primary key (tenant first) gives a tenant's runs with a label
 *   directly, and `run_labels_by_run` tells whether a given run has it (a page of newest runs with
 *   a common label). Not a GIN index over `runs.labels`: the runtime role reads `runs` under
 *   forced row-level security, where PostgreSQL uses an index only for the query's leakproof
 *   conditions, and jsonb containment (`@>`) is not leakproof, so such an index is never used
 *   there (every `labels @>` filter scanned all the tenant's runs); text and uuid equality are.
 *   A run without labels has no row here; the per-step updates of a run never touch this table.
 */
export class RunLabels1766476800000 implements MigrationInterface {
  name = 'RunLabels1766476800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE runs ADD COLUMN labels jsonb NOT NULL DEFAULT '{}';
      ALTER TABLE schedules ADD COLUMN labels jsonb NOT NULL DEFAULT '{}';
      CREATE TABLE run_labels (
        tenant_id uuid NOT NULL,
        key text NOT NULL,
        value text NOT NULL,
        run_id uuid NOT NULL,
        PRIMARY KEY (tenant_id, key, value, run_id),
        FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, id) ON DELETE CASCADE
      );
      CREATE INDEX run_labels_by_run ON run_labels (tenant_id, run_id);
      ALTER TABLE run_labels ENABLE ROW LEVEL SECURITY;
      ALTER TABLE run_labels FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant_isolation ON run_labels
        USING (tenant_id = weft_current_tenant())
        WITH CHECK (tenant_id = weft_current_tenant());
      GRANT SELECT, INSERT, UPDATE, DELETE ON run_labels TO weft_app;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE run_labels;
      ALTER TABLE schedules DROP COLUMN labels;
      ALTER TABLE runs DROP COLUMN labels;
    `);
  }
}
