import type { MigrationInterface, QueryRunner } from 'typeorm';

const RETENTION_TENANTS = 'weft_retention_tenants()';

/**
 * Run retention per tenant.
 *
 * - `tenants.retention_days` (int, NULL = keep runs forever, the default): how many days after
 *   its root run ended a run tree is kept, 1 to 3,650. The runtime role sets it on its own
 *   tenant's row, under the row-level security of `tenants`.
 * - `runs_retention`: the top-level runs that ended, by tenant then end time, so the scheduler
 *   finds a tenant's oldest finished trees with one index range scan, and nothing with one probe.
 * - `weft_retention_tenants()`: the tenants with a retention, ids only, for the scheduler's pass
 *   (a SECURITY DEFINER function owned by `weft_claimer`, which may read `tenants`); the deletion
 *   itself runs in each tenant's transaction.
 */
export class RunRetention1766563200000 implements MigrationInterface {
  name = 'RunRetention1766563200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tenants ADD COLUMN retention_days integer
        CONSTRAINT tenants_retention_days_check CHECK (retention_days BETWEEN 1 AND 3650);
      GRANT SELECT (retention_days) ON tenants TO weft_claimer;
      CREATE INDEX runs_retention ON runs (tenant_id, finished_at) WHERE parent_run_id IS NULL AND finished_at IS NOT NULL;
      CREATE FUNCTION ${RETENTION_TENANTS} RETURNS TABLE (tenant_id uuid)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$ SELECT t.id FROM public.tenants t WHERE t.retention_days IS NOT NULL ORDER BY t.id $$;
      ALTER FUNCTION ${RETENTION_TENANTS} OWNER TO weft_claimer;
      REVOKE ALL ON FUNCTION ${RETENTION_TENANTS} FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION ${RETENTION_TENANTS} TO weft_app;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION ${RETENTION_TENANTS};
      DROP INDEX runs_retention;
      REVOKE SELECT (retention_days) ON tenants FROM weft_claimer;
      ALTER TABLE tenants DROP COLUMN retention_days;
    `);
  }
}
