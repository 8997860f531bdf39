import type { DataSource, EntityManager } from 'typeorm';
import { sql } from '../sql.js';
import type { QueueAccess } from './queue-reservation.repository.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** One queue as a tenant sees it: its own active worker tasks there, and its access to it. */
export interface TenantQueue {
  queue: string;
  /** The tenant's tasks due and not running yet (PENDING or QUEUED, their attempt's `not_before` passed). */
  backlog: number;
  /** The tenant's tasks not running and not due yet (a retry's backoff). */
  delayed: number;
  /** The tenant's RUNNING tasks. */
  running: number;
  /** How long the tenant's longest-waiting due task has waited, ms of the database's clock; null without backlog. */
  oldestPendingAgeMs: number | null;
  access: QueueAccess;
}

/**
 * A tenant's view of the queues: counts over its own active worker tasks only, read in its tenant
 * transaction (row-level security holds it to its rows; the cross-tenant `weft_queue_stats` is for
 * operators). Uses the index `tasks_tenant_active_queues`.
 */
export class QueueViewRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /**
   * The queues `tenantId` has active worker tasks on, plus those of `served` (the queues live
   * workers consume) that it may use, by name; counts are 0 on a queue where it has no task. A
   * queue of `served` reserved for other tenants only is left out: the tenant learns nothing of
   * it. A queue it has tasks on is listed whatever its access (a definition published before a
   * reservation). `now` null is the database's clock. One statement.
   */
  async queues(tenantId: string, served: readonly string[], now: Date | null = null): Promise<TenantQueue[]> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ queue: string; backlog: string; delayed: string; running: string; oldest: number | null; access: QueueAccess }>(
        m,
        `WITH c AS (SELECT COALESCE($2::timestamptz, clock_timestamp()) AS now),
              counts AS (
                SELECT t.queue,
                       count(*) FILTER (WHERE t.status <> 'RUNNING' AND COALESCE(o.not_before, t.updated_at) <= c.now) AS backlog,
                       count(*) FILTER (WHERE t.status <> 'RUNNING' AND COALESCE(o.not_before, t.updated_at) > c.now) AS delayed,
                       count(*) FILTER (WHERE t.status = 'RUNNING') AS running,
                       (1000 * EXTRACT(EPOCH FROM c.now - min(GREATEST(t.updated_at, COALESCE(o.not_before, t.updated_at)))
                         FILTER (WHERE t.status <> 'RUNNING' AND COALESCE(o.not_before, t.updated_at) <= c.now)))::double precision AS oldest
                  FROM tasks t
                 CROSS JOIN c
                  LEFT JOIN outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id AND o.attempt = t.attempt
                 WHERE t.tenant_id = $1 AND t.status IN ('PENDING', 'QUEUED', 'RUNNING') AND t.queue IS NOT NULL
                 GROUP BY t.queue, c.now
              ),
              names AS (SELECT queue FROM counts UNION SELECT unnest($3::text[]))
         SELECT n.queue, COALESCE(k.backlog, 0) AS backlog, COALESCE(k.delayed, 0) AS delayed, COALESCE(k.running, 0) AS running,
                k.oldest, weft_queue_access(n.queue) AS access
           FROM names n LEFT JOIN counts k ON k.queue = n.queue
          WHERE k.queue IS NOT NULL OR weft_queue_access(n.queue) <> 'denied'
          ORDER BY n.queue`,
        [tenantId, now, [...served]],
      );
      return r.rows.map((row) => ({
        queue: row.queue,
        backlog: Number(row.backlog),
        delayed: Number(row.delayed),
        running: Number(row.running),
        oldestPendingAgeMs: row.oldest,
        access: row.access,
      }));
    });
  }
}
