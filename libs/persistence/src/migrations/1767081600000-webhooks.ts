import type { MigrationInterface, QueryRunner } from 'typeorm';

const CLAIM = 'weft_claim_webhook_deliveries(timestamptz, int, timestamptz)';

/**
 * Webhooks: another system told that a run ended or paused.
 *
 * - `webhooks`: a tenant's receiver `url`, the `events` it subscribed to (`run.succeeded`,
 *   `run.failed`, `run.cancelled`, `run.timed_out`, `run.paused`) and the shared HMAC `secret`
 *   its deliveries are signed with (`whsec_<base64url of 32 random bytes>`; the sender needs it
 *   in the clear, so it is stored as it is and only the API's create answer shows it).
 * - `webhook_deliveries`: one event of one run for one webhook, inserted in the transaction of
 *   the run's change (an INSERT … SELECT over the tenant's subscribed webhooks). `run_seq` is the
 *   run's `event_seq` after that event: one delivery per webhook and event, whatever retries the
 *   event's transaction went through. `run` is the run as the event left it (the payload's
 *   `run`). `status` PENDING until a receiver answered 2xx (DELIVERED) or the attempts ran out
 *   (FAILED); `next_attempt_at` is when it is due, moved ahead by a claim as its lease.
 * - `weft_claim_webhook_deliveries(now, limit, lease_until)`: PENDING deliveries that are due,
 *   leased to the caller by moving `next_attempt_at` to `lease_until` (a SECURITY DEFINER
 *   function owned by `weft_claimer`); each is sent and recorded in its tenant's transactions.
 */
export class Webhooks1767081600000 implements MigrationInterface {
  name = 'Webhooks1767081600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        id uuid NOT NULL,
        url text NOT NULL CHECK (char_length(url) <= 2048),
        events text[] NOT NULL CHECK (cardinality(events) > 0
          AND events <@ ARRAY['run.succeeded', 'run.failed', 'run.cancelled', 'run.timed_out', 'run.paused']),
        secret text NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, id)
      );
      CREATE TABLE webhook_deliveries (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        webhook_id uuid NOT NULL,
        event text NOT NULL,
        run_id uuid NOT NULL,
        run_seq int NOT NULL,
        run jsonb NOT NULL,
        status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED')),
        attempts int NOT NULL DEFAULT 0,
        last_status_code int,
        last_error text,
        created_at timestamptz NOT NULL,
        next_attempt_at timestamptz,
        delivered_at timestamptz,
        PRIMARY KEY (tenant_id, id),
        FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE
      );
      CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (tenant_id, webhook_id, run_id, run_seq);
      CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (tenant_id, webhook_id, id);
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';
    `);
    for (const table of ['webhooks', 'webhook_deliveries']) {
      await q.query(`
        ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
        ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
        CREATE POLICY tenant_isolation ON ${table} USING (tenant_id = weft_current_tenant()) WITH CHECK (tenant_id = weft_current_tenant());
        GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO weft_app;
      `);
    }
    await q.query(`
      CREATE POLICY claimer_webhook_deliveries ON webhook_deliveries FOR ALL TO weft_claimer USING (true) WITH CHECK (true);
      GRANT SELECT (tenant_id, id, status, next_attempt_at), UPDATE (next_attempt_at) ON webhook_deliveries TO weft_claimer;
      CREATE FUNCTION ${CLAIM.replace('(timestamptz, int, timestamptz)', '(p_now timestamptz, p_limit int, p_lease_until timestamptz)')}
        RETURNS TABLE (tenant_id uuid, delivery_id uuid)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
      AS $$
        WITH due AS (
          SELECT d.tenant_id, d.id FROM public.webhook_deliveries d
           WHERE d.status = 'PENDING' AND d.next_attempt_at <= COALESCE(p_now, now())
           ORDER BY d.next_attempt_at
           LIMIT p_limit
           FOR UPDATE SKIP LOCKED
        )
        UPDATE public.webhook_deliveries d SET next_attempt_at = p_lease_until
          FROM due WHERE d.tenant_id = due.tenant_id AND d.id = due.id
        RETURNING d.tenant_id, d.id
      $$;
      ALTER FUNCTION ${CLAIM} OWNER TO weft_claimer;
      REVOKE ALL ON FUNCTION ${CLAIM} FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION ${CLAIM} TO weft_app;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION ${CLAIM};
      DROP TABLE webhook_deliveries;
      DROP TABLE webhooks;
    `);
  }
}
