import type { MigrationInterface, QueryRunner } from 'typeorm';

const ACCESS = 'weft_queue_access(text)';
const RESERVATIONS = 'weft_queue_reservations()';

/**
 * The worker registry and queue reservations.
 *
 * - `workers`: one row per running worker process, written by the worker itself (register,
 *   heartbeat, drain, deregister). It is not tenant data — a worker serves every tenant — so it is
 *   a global table without row-level security, owned by the schema's owner. The runtime role may
 *   read it, insert and delete rows, and update only the columns a heartbeat or a drain moves
 *   (`last_heartbeat_at`, `expires_at`, `draining_since`); it may not truncate it or rewrite what a
 *   worker said about itself. `expires_at` is the heartbeat's now plus three heartbeat intervals:
 *   a row past it is a worker that is gone.
 * - `queue_reservations (tenant_id, queue)`: the tenants a queue is reserved for. A tenant table
 *   like the others (tenant first in the key, forced row-level security, `tenant_isolation`): a
 *   tenant's transaction sees and writes its own reservations only. `weft_claimer` reads every
 *   tenant's, for the two functions below.
 * - `weft_queue_access(queue)` (SECURITY DEFINER, owned by `weft_claimer`): what the current
 *   transaction's tenant (`weft_current_tenant()`) may do with `queue`: `shared` (reserved for
 *   nobody), `reserved` (reserved for some tenants, this one among them) or `denied` (reserved for
 *   other tenants only). It names no other tenant. The worker's claim, the eager take of a report,
 *   publishing and the tenant's queue view all ask it.
 * - `weft_queue_reservations()` (SECURITY DEFINER): every reservation with its tenant, for the
 *   operator's `weft admin queue` commands.
 * - Index `tasks_tenant_active_queues (tenant_id, queue)` over the active worker tasks: a tenant's
 *   queue view counts its own active tasks without reading its finished ones.
 */
export class WorkersAndQueueReservations1765440000000 implements MigrationInterface {
  name = 'WorkersAndQueueReservations1765440000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE workers (
        id uuid PRIMARY KEY,
        host text NOT NULL,
        pid integer NOT NULL,
        version text NOT NULL,
        queues text[] NOT NULL,
        concurrency integer NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        last_heartbeat_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        draining_since timestamptz
      );
      GRANT SELECT, INSERT, DELETE ON workers TO weft_app;
      GRANT UPDATE (last_heartbeat_at, expires_at, draining_since) ON workers TO weft_app;

      CREATE TABLE queue_reservations (
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        queue text NOT NULL CHECK (queue <> '' AND queue = lower(queue)),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, queue)
      );
      ALTER TABLE queue_reservations ENABLE ROW LEVEL SECURITY;
      ALTER TABLE queue_reservations FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant_isolation ON queue_reservations
        USING (tenant_id = weft_current_tenant())
        WITH CHECK (tenant_id = weft_current_tenant());
      GRANT SELECT, INSERT, UPDATE, DELETE ON queue_reservations TO weft_app;
      CREATE POLICY claimer_all_tenants ON queue_reservations FOR SELECT TO weft_claimer USING (true);
      GRANT SELECT (tenant_id, queue, created_at) ON queue_reservations TO weft_claimer;

      CREATE FUNCTION weft_queue_access(p_queue text) RETURNS text
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          SELECT CASE
                   WHEN NOT EXISTS (SELECT 1 FROM public.queue_reservations r WHERE r.queue = p_queue) THEN 'shared'
                   WHEN EXISTS (SELECT 1 FROM public.queue_reservations r
                                 WHERE r.queue = p_queue AND r.tenant_id = public.weft_current_tenant()) THEN 'reserved'
                   ELSE 'denied'
                 END
        $$;

      CREATE FUNCTION weft_queue_reservations()
        RETURNS TABLE (queue text, tenant_id uuid, created_at timestamptz)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $$
          SELECT r.queue, r.tenant_id, r.created_at FROM public.queue_reservations r ORDER BY r.queue, r.created_at, r.tenant_id
        $$;

      CREATE INDEX tasks_tenant_active_queues ON tasks (tenant_id, queue)
        WHERE status IN ('PENDING', 'QUEUED', 'RUNNING') AND queue IS NOT NULL;
    `);
    for (const fn of [ACCESS, RESERVATIONS]) {
      await q.query(`
        ALTER FUNCTION ${fn} OWNER TO weft_claimer;
        REVOKE ALL ON FUNCTION ${fn} FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION ${fn} TO weft_app;
      `);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX tasks_tenant_active_queues;
      DROP FUNCTION ${RESERVATIONS};
      DROP FUNCTION ${ACCESS};
      DROP TABLE queue_reservations;
      DROP TABLE workers;
    `);
  }
}
