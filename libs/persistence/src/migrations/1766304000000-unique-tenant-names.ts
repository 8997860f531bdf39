import type { MigrationInterface, QueryRunner } from 'typeorm';

const TENANTS = 'weft_tenants()';

/**
 * Tenant names are unique, compared case-insensitively (`lower(name)`, in the database's
 * collation): an operator tells tenants apart by name (`weft admin tenants`), and `Acme` beside
 * `acme` would be the same customer twice.
 *
 * - Names already taken twice keep the oldest tenant's name; each later tenant of that name
 *   becomes `name (tenant id)`, unique since its id is. Row-level security applies to the owner
 *   too (FORCE), so it is lifted from `tenants` for that one statement; the index would otherwise
 *   be refused.
 * - `tenants_name_unique`: the unique index on `lower(name)`. Not keyed by tenant first: it
 *   compares the tenants with each other.
 * - `weft_tenants()` (SECURITY DEFINER, owned by `weft_claimer`, which already reads every
 *   tenant's `id` and `dispatch_weight`, and now `name` and `created_at` too): every tenant, oldest
 *   first, with its dispatch weight and its number of live (not revoked) API keys, for the
 *   operator's `weft admin` commands. Never a key or any data of a tenant.
 *
 * `down` drops the index and the function; names renamed by `up` stay as they are.
 */
export class UniqueTenantNames1766304000000 implements MigrationInterface {
  name = 'UniqueTenantNames1766304000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tenants NO FORCE ROW LEVEL SECURITY`);
    await q.query(`
      UPDATE tenants t SET name = t.name || ' (' || t.id || ')'
        FROM (SELECT id, row_number() OVER (PARTITION BY lower(name) ORDER BY created_at, id) AS n FROM tenants) d
       WHERE d.id = t.id AND d.n > 1`);
    await q.query(`ALTER TABLE tenants FORCE ROW LEVEL SECURITY`);
    await q.query(`CREATE UNIQUE INDEX tenants_name_unique ON tenants (lower(name))`);
    await q.query(`
      GRANT SELECT (name, created_at) ON tenants TO weft_claimer;
      CREATE FUNCTION ${TENANTS}
        RETURNS TABLE (id uuid, name text, created_at timestamptz, dispatch_weight integer, live_keys integer)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          SELECT t.id, t.name, t.created_at, t.dispatch_weight::integer,
                 (SELECT count(*) FROM public.api_keys k WHERE k.tenant_id = t.id AND k.revoked_at IS NULL)::integer
            FROM public.tenants t ORDER BY t.created_at, t.id
        $$;
      ALTER FUNCTION ${TENANTS} OWNER TO weft_claimer;
      REVOKE ALL ON FUNCTION ${TENANTS} FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION ${TENANTS} TO weft_app;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION ${TENANTS};
      REVOKE SELECT (name, created_at) ON tenants FROM weft_claimer;
      DROP INDEX tenants_name_unique;
    `);
  }
}
