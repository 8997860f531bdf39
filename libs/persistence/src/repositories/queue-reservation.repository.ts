import type { DataSource, EntityManager } from 'typeorm';
import { mapDriverError } from '../errors.js';
import { sql } from '../sql.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/**
 * What a tenant may do with a queue, as `weft_queue_access` answers for the transaction's tenant:
 * `shared` (reserved for nobody: every tenant may use it), `reserved` (reserved for some tenants,
 * this one among them) or `denied` (reserved for other tenants only).
 */
export type QueueAccess = 'shared' | 'reserved' | 'denied';

/** One reservation: `queue` is reserved for `tenantId` (among the other tenants it is reserved for). */
export interface QueueReservation {
  queue: string;
  tenantId: string;
  /** When it was made, on the database's clock. */
  createdAt: Date;
}

/**
 * Queue reservations (`queue_reservations`): a queue with at least one reservation may be used only
 * by the tenants it is reserved for. Each tenant's reservations are its own rows, under row-level
 * security; which queues are reserved for others is asked through `weft_queue_access`, which
 * answers for the transaction's tenant without naming any other. Queue names are stored lower
 * case, as definitions route them (`nodeQueue`).
 */
export class QueueReservationRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /** Reserves `queue` for `tenantId`; false when it already was (nothing changes). */
  async reserve(tenantId: string, queue: string): Promise<boolean> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(m, `INSERT INTO queue_reservations (tenant_id, queue) VALUES ($1, $2) ON CONFLICT (tenant_id, queue) DO NOTHING`, [tenantId, queue]);
      return r.rowCount === 1;
    });
  }

  /** Withdraws the reservation of `queue` for `tenantId`; false when there was none. */
  async release(tenantId: string, queue: string): Promise<boolean> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(m, `DELETE FROM queue_reservations WHERE tenant_id = $1 AND queue = $2`, [tenantId, queue]);
      return r.rowCount === 1;
    });
  }

  /**
   * The access `tenantId` has to each of `queues` (lower case), as a map from queue to
   * {@link QueueAccess}; one statement, answered for the transaction's tenant.
   */
  async access(tenantId: string, queues: readonly string[]): Promise<Map<string, QueueAccess>> {
    if (queues.length === 0) return new Map();
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ queue: string; access: QueueAccess }>(m, `SELECT q AS queue, weft_queue_access(q) AS access FROM unnest($1::text[]) AS q`, [
        [...new Set(queues)],
      ]);
      return new Map(r.rows.map((row) => [row.queue, row.access]));
    });
  }
}

/**
 * Every reservation of every tenant, by queue then age (through the SECURITY DEFINER function
 * `weft_queue_reservations`): for the operator's `weft admin queue` commands, never for an API
 * answer. @throws the mapped driver error.
 */
export async function allQueueReservations(ds: DataSource): Promise<QueueReservation[]> {
  try {
    return (await ds.query(`SELECT queue, tenant_id AS "tenantId", created_at AS "createdAt" FROM weft_queue_reservations()`)) as QueueReservation[];
  } catch (err) {
    throw mapDriverError(err);
  }
}
