import type { EntityManager } from 'typeorm';

/** Rows and affected-row count of one statement. */
export interface SqlResult<R> {
  rows: R[];
  /** Rows inserted/updated/deleted (or returned, for a SELECT). */
  rowCount: number;
}

/**
 * Runs one parameterised statement (`$1, $2…`) on the transaction of `m` and returns its rows
 * and affected-row count (TypeORM's `EntityManager.query` hides the count of UPDATE/DELETE
 * behind a driver-specific tuple). `m` must be transaction-bound, e.g. from `withTenant`.
 * Pass `jsonb` values already `JSON.stringify`-ed (pg would send JS arrays as SQL arrays).
 * Driver errors are thrown as they are; the enclosing `withTenant` maps them.
 */
export async function sql<R = Record<string, unknown>>(m: EntityManager, text: string, params: unknown[] = []): Promise<SqlResult<R>> {
  const qr = m.queryRunner;
  if (!qr) throw new Error('sql() needs a transaction-bound EntityManager');
  const res = await qr.query(text, params, true);
  return { rows: (res.records ?? []) as R[], rowCount: res.affected ?? 0 };
}

/** `JSON.stringify` for a `jsonb` parameter; `undefined` becomes SQL NULL. */
export function jsonb(v: unknown): string | null {
  return v === undefined ? null : JSON.stringify(v);
}
