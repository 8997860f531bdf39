import type { MigrationInterface, QueryRunner } from 'typeorm';

const CLAIM = 'weft_claim_run_batches(timestamptz, int, timestamptz)';

/**
 * Bulk actions over runs.
 *
 * - `run_batches`: one bulk action of a tenant (CANCEL, RETRY, PAUSE or RESUME) over the runs its
 *   filter matched when it was created (`filter` as given, for the record), its progress counts,
 *   `status` RUNNING until every item is done (COMPLETED) or it is stopped (STOPPED); `next_at`
 *   paces it (the next slice of items may go then) and `claimed_until` is the lease of the
 *   scheduler working on it. An idempotency key names one batch per tenant.
 * - `run_batch_items`: the runs of a batch, fixed at its creation, in order (`seq`), each acted on
 *   once: `outcome` PENDING, then APPLIED, SKIPPED (the action does not apply to the run, with
 *   why) or FAILED (with the error).
 * - `weft_claim_run_batches(now, limit, lease_until)`: the RUNNING batches whose next slice is
 *   due and whose lease ended, leased to the caller (a SECURITY DEFINER function owned by
 *   `weft_claimer`); the items are acted on in each tenant's transactions.
 */
export class RunBatches1766995200000 implements MigrationInterface {
  name = 'RunBatches1766995200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE run_batches (
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        id uuid NOT NULL,
        action text NOT NULL CHECK (action IN ('CANCEL', 'RETRY', 'PAUSE', 'RESUME')),
        filter jsonb NOT NULL,
        from_node_id text,
        reason text,
        idempotency_key text,
        status text NOT NULL CHECK (status IN ('RUNNING', 'COMPLETED', 'STOPPED')),
        total int NOT NULL,
        applied int NOT NULL DEFAULT 0,
        skipped int NOT NULL DEFAULT 0,
        failed int NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        finished_at timestamptz,
        next_at timestamptz NOT NULL,
        claimed_until timestamptz,
        PRIMARY KEY (tenant_id, id)
      );
      CREATE UNIQUE INDEX run_batches_idempotency ON run_batches (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
      CREATE INDEX run_batches_due ON run_batches (next_at) WHERE status = 'RUNNING';
      CREATE TABLE run_batch_items (
        tenant_id uuid NOT NULL,
        batch_id uuid NOT NULL,
        seq int NOT NULL,
        run_id uuid NOT NULL,
        outcome text NOT NULL DEFAULT 'PENDING' CHECK (outcome IN ('PENDING', 'APPLIED', 'SKIPPED', 'FAILED')),
        error text,
        PRIMARY KEY (tenant_id, batch_id, seq),
        FOREIGN KEY (tenant_id, batch_id) REFERENCES run_batches (tenant_id, id) ON DELETE CASCADE
      );
      CREATE INDEX run_batch_items_pending ON run_batch_items (tenant_id, batch_id, seq) WHERE outcome = 'PENDING';
    `);
    for (const table of ['run_batches', 'run_batch_items']) {
      await q.query(`
        ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
        ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
        CREATE POLICY tenant_isolation ON ${table} USING (tenant_id = weft_current_tenant()) WITH CHECK (tenant_id = weft_current_tenant());
        GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO weft_app;
      `);
    }
    await q.query(`
      CREATE POLICY claimer_run_batches ON run_batches FOR ALL TO weft_claimer USING (true) WITH CHECK (true);
      GRANT SELECT (tenant_id, id, status, next_at, claimed_until), UPDATE (claimed_until) ON run_batches TO weft_claimer;
      CREATE FUNCTION ${CLAIM.replace('(timestamptz, int, timestamptz)', '(p_now timestamptz, p_limit int, p_lease_until timestamptz)')}
        RETURNS TABLE (tenant_id uuid, batch_id uuid)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
      AS $$
        WITH due AS (
          SELECT b.tenant_id, b.id FROM public.run_batches b
           WHERE b.status = 'RUNNING' AND b.next_at <= COALESCE(p_now, now())
             AND (b.claimed_until IS NULL OR b.claimed_until <= COALESCE(p_now, now()))
           ORDER BY b.next_at
           LIMIT p_limit
           FOR UPDATE SKIP LOCKED
        )
        UPDATE public.run_batches b SET claimed_until = p_lease_until
          FROM due WHERE b.tenant_id = due.tenant_id AND b.id = due.id
        RETURNING b.tenant_id, b.id
      $$;
      ALTER FUNCTION ${CLAIM} OWNER TO weft_claimer;
      REVOKE ALL ON FUNCTION ${CLAIM} FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION ${CLAIM} TO weft_app;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION ${CLAIM};
      DROP TABLE run_batch_items;
      DROP TABLE run_batches;
    `);
  }
}
