import type { DataSource, EntityManager } from 'typeorm';
import { sql } from '../sql.js';
import { isUuid } from '../tenant-transaction.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** Bounds of a tenant's run retention (`tenants.retention_days`), in days; null keeps runs forever. */
export const RETENTION_DAYS = { min: 1, max: 3650 } as const;

/** A tenant's settings, as its admins read and change them. */
export interface TenantSettings {
  /**
   * Days a run tree is kept after its root run ended (1–3,650), after which the scheduler deletes
   * it with all its rows; null (the default) keeps runs forever.
   */
  retentionDays: number | null;
}

/** The settings a tenant's admins change on their own tenant's row (`tenants`). */
export class TenantSettingsRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /** The tenant's settings; null when the tenant does not exist. */
  async get(tenantId: string): Promise<TenantSettings | null> {
    if (!isUuid(tenantId)) return null;
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ retention_days: number | null }>(m, `SELECT retention_days FROM tenants WHERE id = $1`, [tenantId]);
      const row = r.rows[0];
      return row ? { retentionDays: row.retention_days } : null;
    });
  }

  /**
   * Sets the tenant's run retention to `days` (an integer from {@link RETENTION_DAYS} min to max,
   * else a RangeError naming the bounds; null keeps runs forever) and returns the settings as
   * stored, or null when the tenant does not exist (nothing written).
   */
  async setRetentionDays(tenantId: string, days: number | null): Promise<TenantSettings | null> {
    if (days !== null && (!Number.isInteger(days) || days < RETENTION_DAYS.min || days > RETENTION_DAYS.max)) {
      throw new RangeError(`retention days must be an integer from ${RETENTION_DAYS.min} to ${RETENTION_DAYS.max}, or null, got ${days}`);
    }
    if (!isUuid(tenantId)) return null;
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ retention_days: number | null }>(m, `UPDATE tenants SET retention_days = $2 WHERE id = $1 RETURNING retention_days`, [
        tenantId,
        days,
      ]);
      const row = r.rows[0];
      return row ? { retentionDays: row.retention_days } : null;
    });
  }
}
