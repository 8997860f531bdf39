import type { DataSource, EntityManager } from 'typeorm';
import { mapDriverError } from '../errors.js';
import { sql, type SqlResult } from '../sql.js';
import { assertTenant, sqlInTenant, withTenant } from '../tenant-transaction.js';

/**
 * Base of every tenant-owned repository: each public method takes the `tenantId` first and runs
 * its queries through {@link TenantScopedRepository.inTenant}, so no query can run without a
 * tenant (after Novu's base repository).
 *
 * Constructed with a DataSource, each call opens its own `withTenant` transaction; constructed
 * with an EntityManager from `withTenant` (to compose several calls in one transaction), each
 * call checks the manager is bound to the same tenant and throws otherwise.
 */
export abstract class TenantScopedRepository {
  constructor(protected readonly db: DataSource | EntityManager) {}

  /** Runs `fn` inside a transaction bound to `tenantId`; driver errors are mapped. */
  protected async inTenant<T>(tenantId: string, fn: (m: EntityManager) => Promise<T>): Promise<T> {
    if (isDataSource(this.db)) return withTenant(this.db, tenantId, fn);
    assertTenant(this.db, tenantId);
    try {
      return await fn(this.db);
    } catch (err) {
      throw mapDriverError(err);
    }
  }

  /**
   * Runs the one statement `text` for `tenantId`: on a DataSource in one round trip with no
   * BEGIN or COMMIT of its own (`sqlInTenant`), on a bound EntityManager in its transaction.
   */
  protected async queryInTenant<R = Record<string, unknown>>(tenantId: string, text: string, params: unknown[]): Promise<SqlResult<R>> {
    if (isDataSource(this.db)) return sqlInTenant<R>(this.db, tenantId, text, params);
    return this.inTenant(tenantId, (m) => sql<R>(m, text, params));
  }
}

/** Tells a DataSource from an EntityManager without `instanceof` (safe across module copies). */
export function isDataSource(db: DataSource | EntityManager): db is DataSource {
  return 'isInitialized' in db && typeof (db as DataSource).initialize === 'function';
}
