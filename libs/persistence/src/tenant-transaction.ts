import type { DataSource, EntityManager } from 'typeorm';
import { mapDriverError } from './errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `s` is a UUID in its canonical textual form (any version). */
export function isUuid(s: unknown): s is string {
  return typeof s === 'string' && UUID.test(s);
}

/** Managers opened by {@link withTenant}, with the tenant they were opened for. */
const tenantOfManager = new WeakMap<EntityManager, string>();

/**
 * Runs `fn` in one transaction bound to `tenantId`: BEGIN, then
 * `select set_config('app.tenant_id', $1, true)` (transaction-local, so a pooled connection
 * never carries a tenant into the next transaction; never a session `SET`), then `fn`, then
 * COMMIT (ROLLBACK when `fn` throws). Row-level security policies read that setting.
 *
 * Errors are passed through {@link mapDriverError}, so callers see `UniqueViolation` /
 * `TransientDbError` instead of raw driver errors; errors thrown by `fn` itself come back
 * unchanged. Throws a TypeError when `tenantId` is not a UUID (nothing is opened).
 */
export async function withTenant<T>(ds: DataSource, tenantId: string, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  if (!isUuid(tenantId)) throw new TypeError(`tenant id must be a UUID, got ${JSON.stringify(tenantId)}`);
  try {
    return await ds.transaction(async (m) => {
      await m.query(`select set_config('app.tenant_id', $1, true)`, [tenantId]);
      tenantOfManager.set(m, tenantId);
      try {
        return await fn(m);
      } finally {
        tenantOfManager.delete(m);
      }
    });
  } catch (err) {
    throw mapDriverError(err);
  }
}

/**
 * The tenant the manager's transaction was opened for by {@link withTenant}, or `undefined`
 * when the manager is not (or no longer) inside such a transaction.
 */
export function tenantOf(m: EntityManager): string | undefined {
  return tenantOfManager.get(m);
}

/**
 * Throws unless `m` is inside a {@link withTenant} transaction for exactly `tenantId` — the
 * guard repositories use when handed a manager instead of a DataSource (a query can never run
 * for a tenant it was not opened for).
 */
export function assertTenant(m: EntityManager, tenantId: string): void {
  const bound = tenantOfManager.get(m);
  if (bound === undefined) throw new Error('EntityManager is not inside a withTenant() transaction');
  if (bound !== tenantId) throw new Error(`EntityManager is bound to tenant ${bound}, not ${tenantId}`);
}
