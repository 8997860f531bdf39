import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes of the run search (`RunFilter`) for the filters whose rows the tenant's newest-first
 * scan cannot find quickly. The runtime role reads under row-level security, where PostgreSQL
 * uses an index only for leakproof conditions: every index condition here is a uuid, text or
 * timestamptz comparison; the non-leakproof ILIKE is only filtered on, never an index condition.
 *
 * - `runs_tenant_finished`: a finished_at window (`finishedAfter`/`finishedBefore`) is counted
 *   from it alone, and a page of one starts at the window's latest `created_at` (included, so
 *   read without the table; see `RunRepository.listRuns`) instead of scanning the tenant's runs
 *   from the newest until the window (a day three months back was 97,000 rows of 100,000).
 * - `runs_tenant_errors`: `errorContains` reads only the runs with an error, newest first (ILIKE
 *   is strict, so the planner proves `error IS NOT NULL` from it). Not a pg_trgm index: ILIKE
 *   (`texticlike`) is not leakproof, so a trigram index is never used under the runtime role's
 *   row-level security, and a leakproof wrapper needs a superuser. A search thus costs the tenant's
 *   failed runs, not all its runs.
 * - `tasks_failed_nodes`: `failedNodeId` reads the tenant's FAILED tasks of that node instead of
 *   every task of the tenant.
 *
 * `CREATE INDEX` (not CONCURRENTLY: migrations run in a transaction) blocks writes to `runs` and
 * `tasks` while it builds.
 */
export class RunSearchIndexes1766908800000 implements MigrationInterface {
  name = 'RunSearchIndexes1766908800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX runs_tenant_finished ON runs (tenant_id, finished_at) INCLUDE (created_at) WHERE finished_at IS NOT NULL;
      CREATE INDEX runs_tenant_errors ON runs (tenant_id, created_at DESC, id DESC) WHERE error IS NOT NULL;
      CREATE INDEX tasks_failed_nodes ON tasks (tenant_id, node_id, run_id) WHERE status = 'FAILED';
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX tasks_failed_nodes;
      DROP INDEX runs_tenant_errors;
      DROP INDEX runs_tenant_finished;
    `);
  }
}
