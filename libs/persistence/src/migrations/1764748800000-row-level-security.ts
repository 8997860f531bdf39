import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tenant-owned tables and the column holding their tenant. */
const TENANT_TABLES: readonly (readonly [table: string, column: string])[] = [
  ['tenants', 'id'],
  ['api_keys', 'tenant_id'],
  ['workflows', 'tenant_id'],
  ['workflow_versions', 'tenant_id'],
  ['runs', 'tenant_id'],
  ['tasks', 'tenant_id'],
  ['signals', 'tenant_id'],
  ['run_events', 'tenant_id'],
  ['outbox', 'tenant_id'],
];

/**
 * Creates `role` when it does not exist yet. Roles are cluster-wide and several databases of one
 * server (tests, `weft dev`) migrate concurrently, so a duplicate created in between is ignored.
 */
const createRole = (role: string, options: string) => `
  DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role}') THEN
      CREATE ROLE ${role} ${options};
    END IF;
  EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
  END $$;`;

/**
 * Row-level security: the database's own wall between tenants.
 *
 * - `weft_current_tenant()` is `app.tenant_id` (set per transaction by `withTenant`) as a uuid,
 *   or NULL when no tenant is set — then every policy compares with NULL and nothing is visible
 *   or writable.
 * - Every tenant table gets ENABLE + FORCE ROW LEVEL SECURITY and one policy `tenant_isolation`
 *   (all commands, `USING` and `WITH CHECK` on its tenant column = `weft_current_tenant()`).
 * - `weft_app` is the runtime's login role: not a superuser, no BYPASSRLS, owns nothing; it may
 *   SELECT/INSERT/UPDATE/DELETE the tenant tables (never TRUNCATE, never `migrations`) and call
 *   the claim functions.
 * - `weft_claimer` (NOLOGIN, nobody is a member) owns the four SECURITY DEFINER functions that do
 *   the cross-tenant work of the scheduler and of authentication. Its own policies let it see
 *   every tenant's rows of `tasks`, `outbox` and `api_keys`, and its column grants let it read
 *   those and move only the claim columns (`tasks.wake_at`, `outbox.claimed_at`/`enqueued_at`).
 *   The functions return ids only; the caller then handles each item inside its tenant's
 *   transaction.
 */
export class RowLevelSecurity1764748800000 implements MigrationInterface {
  name = 'RowLevelSecurity1764748800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(createRole('weft_app', 'LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE'));
    await q.query(createRole('weft_claimer', 'NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE'));
    await q.query(`
      CREATE FUNCTION weft_current_tenant() RETURNS uuid
        LANGUAGE sql STABLE PARALLEL SAFE
        AS $$ SELECT NULLIF(current_setting('app.tenant_id', true), '')::uuid $$;

      GRANT USAGE ON SCHEMA public TO weft_app, weft_claimer;
      GRANT USAGE ON SEQUENCE outbox_id_seq TO weft_app;
    `);
    for (const [table, column] of TENANT_TABLES) {
      await q.query(`
        ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
        ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
        CREATE POLICY tenant_isolation ON ${table}
          USING (${column} = weft_current_tenant())
          WITH CHECK (${column} = weft_current_tenant());
        GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO weft_app;
      `);
    }
    await q.query(`
      CREATE POLICY claimer_all_tenants ON tasks FOR ALL TO weft_claimer USING (true) WITH CHECK (true);
      CREATE POLICY claimer_all_tenants ON outbox FOR ALL TO weft_claimer USING (true) WITH CHECK (true);
      CREATE POLICY claimer_all_tenants ON api_keys FOR SELECT TO weft_claimer USING (true);
      GRANT SELECT (tenant_id, id, run_id, node_id, status, queue, attempt, wake_at, updated_at) ON tasks TO weft_claimer;
      GRANT UPDATE (wake_at) ON tasks TO weft_claimer;
      GRANT SELECT (id, tenant_id, task_id, attempt, not_before, created_at, claimed_at, enqueued_at) ON outbox TO weft_claimer;
      GRANT UPDATE (claimed_at, enqueued_at) ON outbox TO weft_claimer;
      GRANT SELECT (tenant_id, id, role, key_hash, key_prefix, revoked_at) ON api_keys TO weft_claimer;

      -- Due timers: WAITING tasks whose wake_at passed, claimed by moving wake_at a lease ahead.
      CREATE FUNCTION weft_claim_due_timers(p_now timestamptz, p_limit int, p_lease_until timestamptz)
        RETURNS TABLE (tenant_id uuid, task_id uuid, run_id uuid, node_id text)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH due AS (
            SELECT t.tenant_id, t.id FROM public.tasks t
             WHERE t.status = 'WAITING' AND t.wake_at <= p_now
             ORDER BY t.wake_at
             LIMIT p_limit
             FOR UPDATE SKIP LOCKED
          )
          UPDATE public.tasks t SET wake_at = p_lease_until
            FROM due WHERE t.tenant_id = due.tenant_id AND t.id = due.id
          RETURNING t.tenant_id, t.id, t.run_id, t.node_id
        $$;

      -- Outbox rows committed but not enqueued, older than the grace period, unclaimed or with
      -- an expired claim; claimed by setting claimed_at.
      CREATE FUNCTION weft_claim_outbox(p_created_before timestamptz, p_claimed_before timestamptz, p_limit int, p_now timestamptz)
        RETURNS TABLE (outbox_id bigint, tenant_id uuid, task_id uuid, attempt int)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH due AS (
            SELECT o.id FROM public.outbox o
             WHERE o.enqueued_at IS NULL AND o.created_at <= p_created_before
               AND (o.claimed_at IS NULL OR o.claimed_at <= p_claimed_before)
             ORDER BY o.created_at, o.id
             LIMIT p_limit
             FOR UPDATE SKIP LOCKED
          )
          UPDATE public.outbox o SET claimed_at = p_now
            FROM due WHERE o.id = due.id
          RETURNING o.id, o.tenant_id, o.task_id, o.attempt
        $$;

      -- Active worker tasks whose enqueued job may have vanished: unchanged since p_cutoff, with
      -- an outbox row for the current attempt marked enqueued before p_cutoff. Claimed by moving
      -- the row's enqueued_at to p_now (hidden from other replicas until the cutoff passes again).
      CREATE FUNCTION weft_claim_lost_tasks(p_cutoff timestamptz, p_limit int, p_now timestamptz)
        RETURNS TABLE (outbox_id bigint, tenant_id uuid, task_id uuid, attempt int)
        LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          WITH lost AS (
            SELECT o.id FROM public.tasks t
              JOIN public.outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id AND o.attempt = t.attempt
             WHERE t.status IN ('PENDING', 'QUEUED', 'RUNNING') AND t.queue IS NOT NULL
               AND t.updated_at <= p_cutoff AND o.enqueued_at <= p_cutoff AND o.not_before <= p_cutoff
             ORDER BY t.updated_at, o.id
             LIMIT p_limit
             FOR UPDATE OF o SKIP LOCKED
          )
          UPDATE public.outbox o SET enqueued_at = p_now
            FROM lost WHERE o.id = lost.id
          RETURNING o.id, o.tenant_id, o.task_id, o.attempt
        $$;

      -- The active keys with a display prefix: the candidates a raw key is compared against (in
      -- constant time, by the caller) before its tenant is known.
      CREATE FUNCTION weft_api_key_candidates(p_prefix text)
        RETURNS TABLE (tenant_id uuid, key_id uuid, role text, key_hash text)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          SELECT k.tenant_id, k.id, k.role, k.key_hash FROM public.api_keys k
           WHERE k.key_prefix = p_prefix AND k.revoked_at IS NULL
           LIMIT 16
        $$;
    `);
    for (const fn of [
      'weft_claim_due_timers(timestamptz, int, timestamptz)',
      'weft_claim_outbox(timestamptz, timestamptz, int, timestamptz)',
      'weft_claim_lost_tasks(timestamptz, int, timestamptz)',
      'weft_api_key_candidates(text)',
    ]) {
      await q.query(`
        ALTER FUNCTION ${fn} OWNER TO weft_claimer;
        REVOKE ALL ON FUNCTION ${fn} FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION ${fn} TO weft_app;
      `);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION weft_api_key_candidates(text);
      DROP FUNCTION weft_claim_lost_tasks(timestamptz, int, timestamptz);
      DROP FUNCTION weft_claim_outbox(timestamptz, timestamptz, int, timestamptz);
      DROP FUNCTION weft_claim_due_timers(timestamptz, int, timestamptz);
      DROP POLICY claimer_all_tenants ON tasks;
      DROP POLICY claimer_all_tenants ON outbox;
      DROP POLICY claimer_all_tenants ON api_keys;
      REVOKE ALL ON tasks, outbox, api_keys FROM weft_claimer;
    `);
    for (const [table] of TENANT_TABLES) {
      await q.query(`
        DROP POLICY tenant_isolation ON ${table};
        ALTER TABLE ${table} NO FORCE ROW LEVEL SECURITY;
        ALTER TABLE ${table} DISABLE ROW LEVEL SECURITY;
        REVOKE ALL ON ${table} FROM weft_app;
      `);
    }
    await q.query(`
      REVOKE USAGE ON SEQUENCE outbox_id_seq FROM weft_app;
      REVOKE USAGE ON SCHEMA public FROM weft_app, weft_claimer;
      DROP FUNCTION weft_current_tenant();
    `);
    // The roles are cluster-wide and may serve other databases: they are left in place.
  }
}
